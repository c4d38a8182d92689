import SocketBench

/// A chat server to connect to: `HOST:PORT` on the command line (`127.0.0.1:7777`, `[::1]:7777`,
/// `localhost:7777`).
public struct ServerAddress: Equatable, Sendable, CustomStringConvertible {
    /// A numeric IPv4 or IPv6 address (without brackets), or a name.
    public var host: String
    /// The TCP port, 1…65,535.
    public var port: UInt16

    /// The address `host`:`port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `im-server`'s default address: 127.0.0.1:7777.
    public static let defaultServer = ServerAddress(host: "127.0.0.1", port: 7777)

    /// Parses `HOST:PORT` or `[IPV6]:PORT`.
    /// - Throws: ``ArgumentError`` naming `text` when there is no host, no port, or the port is not 1…65,535.
    public static func parse(_ text: String) throws(ArgumentError) -> ServerAddress {
        let host: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") {
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        } else {
            throw ArgumentError("--server needs HOST:PORT (or [IPV6]:PORT), not \(text)")
        }
        guard !host.isEmpty, let number = UInt16(port), number > 0 else {
            throw ArgumentError("--server needs HOST:PORT with a port in 1...65535, not \(text)")
        }
        return ServerAddress(host: String(host), port: number)
    }

    /// Whether the host is an IPv4 loopback address (127.0.0.0/8), from which source addresses may be spread.
    public var isIPv4Loopback: Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `HOST:PORT`, IPv6 addresses in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
