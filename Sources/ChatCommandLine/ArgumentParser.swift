import AsyncSocket
import ChatProtocol
import LongLink

/// The command-line parser `im-server` and `im-client` share.
///
/// Options in any order, `--name value` or `--name=value`, positionals between them.
package struct ArgumentParser {
    private var remaining: ArraySlice<String>
    private var pendingValue: String?
    package private(set) var positionals: [String] = []
    package let usage: String

    package init(_ arguments: [String], usage: String) {
        remaining = arguments[...]
        self.usage = usage
    }

    /// The next option name, collecting positionals on the way; nil at the end.
    package mutating func nextOption() -> String? {
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

    package mutating func value(for option: String) throws(UsageError) -> String {
        if let value = pendingValue {
            pendingValue = nil
            return value
        }
        guard let value = remaining.popFirst() else { throw UsageError(description: "\(option) needs a value\n\(usage)") }
        return value
    }

    package mutating func port(for option: String) throws(UsageError) -> UInt16 {
        let text = try value(for: option)
        guard let port = UInt16(text) else { throw UsageError(description: "\(option): not a port (0-65535): \(text)\n\(usage)") }
        return port
    }

    /// `HOST:PORT`, IPv6 in brackets (``Endpoint/init(serverArgument:)``).
    package mutating func server(for option: String) throws(UsageError) -> Endpoint {
        let text = try value(for: option)
        guard let endpoint = Endpoint(serverArgument: text) else {
            throw UsageError(description: "\(option): not HOST:PORT (IPv6 in brackets: [::1]:7000; port 1-65535): \(text)\n\(usage)")
        }
        return endpoint
    }

    package mutating func seconds(for option: String) throws(UsageError) -> Duration {
        let text = try value(for: option)
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw UsageError(description: "\(option): not a positive number of seconds: \(text)\n\(usage)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// A whole number from 1 to 1,000,000,000.
    package mutating func count(for option: String) throws(UsageError) -> Int {
        let text = try value(for: option)
        guard let count = Int(text), count >= 1, count <= 1_000_000_000 else {
            throw UsageError(description: "\(option): not a positive whole number: \(text)\n\(usage)")
        }
        return count
    }

    /// A numeric IPv4 multicast address (224.0.0.0/4) to send discovery queries to or join.
    package mutating func group(for option: String) throws(UsageError) -> String {
        let text = try value(for: option)
        guard let address = SocketAddress(ipAddress: text, port: 0), DiscoveryProtocol.isIPv4Multicast(address) else {
            throw UsageError(description: "\(option): not an IPv4 multicast address (224.0.0.0-239.255.255.255): \(text)\n\(usage)")
        }
        return address.host
    }

    /// A server name: at most 64 bytes of UTF-8, no control characters; empty only if `allowEmpty`.
    package mutating func serverName(for option: String, allowEmpty: Bool) throws(UsageError) -> String {
        let text = try value(for: option)
        guard (allowEmpty || !text.isEmpty) && DiscoveryQuery.isValidName(text) else {
            throw UsageError(description: "\(option): a name is 1 to 64 bytes of UTF-8 without control characters\n\(usage)")
        }
        return text
    }

    package func unknown(_ option: String) -> UsageError {
        UsageError(description: "unknown option \(option)\n\(usage)")
    }

    package func expectNoPositionals() throws(UsageError) {
        guard positionals.isEmpty else { throw UsageError(description: "unexpected argument \(positionals[0])\n\(usage)") }
    }
}
