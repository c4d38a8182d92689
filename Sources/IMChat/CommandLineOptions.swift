/// A command line that cannot be used; `message` says why and how to call the program.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public let description: String
}

/// The port `im-server` listens on and `im-client` connects to unless told otherwise.
public let defaultChatPort: UInt16 = 7777

/// `im-server [--host H] [--port P] [--idle-timeout SECONDS]`.
public struct ServerOptions: Equatable {
    /// Interface to listen on. Default 127.0.0.1.
    public var host = "127.0.0.1"
    /// Port; 0 = any free port. Default ``defaultChatPort``.
    public var port = defaultChatPort
    /// Seconds of silence after which a client is dropped. Default 360 s (two 180 s heartbeats).
    public var idleTimeout: Duration = .seconds(360)

    public static let usage = "usage: im-server [--host H] [--port P] [--idle-timeout SECONDS]"

    /// Parses the arguments after the program name.
    /// - Throws: ``UsageError``.
    public init(arguments: [String]) throws(UsageError) {
        var parser = ArgumentParser(arguments, usage: ServerOptions.usage)
        while let option = parser.nextOption() {
            switch option {
            case "--host": host = try parser.value(for: option)
            case "--port": port = try parser.port(for: option)
            case "--idle-timeout": idleTimeout = try parser.seconds(for: option)
            default: throw parser.unknown(option)
            }
        }
        try parser.expectNoPositionals()
    }
}

/// `im-client NAME [--host H] [--port P] [--heartbeat SECONDS]`.
public struct ClientOptions: Equatable {
    /// The user name to log in with.
    public var name: String
    /// Server host. Default 127.0.0.1.
    public var host = "127.0.0.1"
    /// Server port. Default ``defaultChatPort``.
    public var port = defaultChatPort
    /// Seconds between heartbeats. Default 180 s, the articles' value.
    public var heartbeat: Duration = .seconds(180)

    public static let usage = "usage: im-client NAME [--host H] [--port P] [--heartbeat SECONDS]"

    /// Parses the arguments after the program name.
    /// - Throws: ``UsageError``.
    public init(arguments: [String]) throws(UsageError) {
        var parser = ArgumentParser(arguments, usage: ClientOptions.usage)
        var name: String?
        while let option = parser.nextOption() {
            switch option {
            case "--host": host = try parser.value(for: option)
            case "--port": port = try parser.port(for: option)
            case "--heartbeat": heartbeat = try parser.seconds(for: option)
            default: throw parser.unknown(option)
            }
        }
        name = parser.positionals.first
        guard let name, parser.positionals.count == 1 else {
            throw UsageError(description: ClientOptions.usage)
        }
        self.name = name
    }
}

/// Options in any order, `--name value` or `--name=value`, positionals between them.
private struct ArgumentParser {
    private var remaining: ArraySlice<String>
    private var pendingValue: String?
    private(set) var positionals: [String] = []
    let usage: String

    init(_ arguments: [String], usage: String) {
        remaining = arguments[...]
        self.usage = usage
    }

    /// The next option name, collecting positionals on the way; nil at the end.
    mutating func nextOption() -> String? {
        while let argument = remaining.popFirst() {
            if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    pendingValue = String(argument[argument.index(after: equals)...])
                    return String(argument[..<equals])
                }
                pendingValue = nil
                return argument
            }
            positionals.append(argument)
        }
        return nil
    }

    mutating func value(for option: String) throws(UsageError) -> String {
        if let value = pendingValue {
            pendingValue = nil
            return value
        }
        guard let value = remaining.popFirst() else { throw UsageError(description: "\(option) needs a value\n\(usage)") }
        return value
    }

    mutating func port(for option: String) throws(UsageError) -> UInt16 {
        let text = try value(for: option)
        guard let port = UInt16(text) else { throw UsageError(description: "\(option): not a port (0-65535): \(text)\n\(usage)") }
        return port
    }

    mutating func seconds(for option: String) throws(UsageError) -> Duration {
        let text = try value(for: option)
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw UsageError(description: "\(option): not a positive number of seconds: \(text)\n\(usage)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    func unknown(_ option: String) -> UsageError {
        UsageError(description: "unknown option \(option)\n\(usage)")
    }

    func expectNoPositionals() throws(UsageError) {
        guard positionals.isEmpty else { throw UsageError(description: "unexpected argument \(positionals[0])\n\(usage)") }
    }
}
