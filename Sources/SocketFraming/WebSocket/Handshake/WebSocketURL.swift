import Foundation

/// A `ws://` or `wss://` URL (RFC 6455 §3): where a client connects and what it asks for.
///
///     ws://[::1]:9000/chat?room=1   →  host "::1", port 9000, not secure, resource "/chat?room=1",
///                                      Host header "[::1]:9000"
///     wss://Example.com             →  host "example.com", port 443, secure, resource "/",
///                                      Host header "example.com"
///
/// The scheme is `ws` or `wss` (any case); the port defaults to 80 and 443 (§3) and, written, is 1–65535;
/// an IPv6 literal is written in brackets (RFC 3986 §3.2.2). Refused: other schemes, userinfo (`user@`,
/// which RFC 6455 does not allow in a WebSocket URI), a fragment (§3: "MUST NOT" be used), an empty host,
/// and whitespace or control characters anywhere.
public struct WebSocketURL: Equatable, Sendable, CustomStringConvertible {
    /// Why a string is not a WebSocket URL.
    public enum ParseError: Error, Equatable, Sendable {
        /// The scheme is not `ws` or `wss`, or `://` is missing.
        case unsupportedScheme
        /// The authority holds userinfo (`user:password@`).
        case userinfoNotAllowed
        /// The URL has a fragment (`#…`).
        case fragmentNotAllowed
        /// The host is empty, a bracketed literal is not IPv6, or the host holds characters a host
        /// cannot (RFC 3986 §3.2.2).
        case invalidHost
        /// The port is not a number in 1–65535.
        case invalidPort
        /// Whitespace, a control character or a non-ASCII byte in the URL.
        case invalidCharacter
    }

    /// Whether the scheme is `wss`: the connection runs over TLS.
    public var isSecure: Bool
    /// The host: a name (lower-cased), an IPv4 address, or an IPv6 address without brackets.
    public var host: String
    /// The port: as written, else 80 for `ws` and 443 for `wss`.
    public var port: Int
    /// The resource name (§3): the path (`/` when empty) and, if any, `?` and the query, as written.
    public var resourceName: String

    /// The `Host` header's value (RFC 9110 §7.2): the host (IPv6 in brackets), then `:port` unless the
    /// port is the scheme's default.
    public var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }

    /// The URL written out: `wss://example.com/chat`.
    public var description: String { "\(isSecure ? "wss" : "ws")://\(hostHeader)\(resourceName)" }

    /// Parses `string`; see the type's documentation for what is refused.
    public init(_ string: String) throws(ParseError) {
        guard string.utf8.allSatisfy(HTTPSyntax.isVisible) else { throw .invalidCharacter }
        guard let separator = string.range(of: "://") else { throw .unsupportedScheme }
        switch string[..<separator.lowerBound].lowercased() {
        case "ws": isSecure = false
        case "wss": isSecure = true
        default: throw .unsupportedScheme
        }
        let rest = string[separator.upperBound...]
        guard !rest.contains("#") else { throw .fragmentNotAllowed }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { throw .userinfoNotAllowed }
        let pathAndQuery = String(rest[authorityEnd...])
        resourceName = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        let (host, portText) = try Self.splitAuthority(authority)
        self.host = host
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.utf8.allSatisfy(HTTPSyntax.isDigit), let port = Int(portText),
                (1...65_535).contains(port)
            else { throw .invalidPort }
            self.port = port
        } else {
            port = isSecure ? 443 : 80
        }
    }

    /// The host (lower-cased, without brackets) and the port's text, if a colon introduced one.
    private static func splitAuthority(_ authority: Substring) throws(ParseError) -> (String, String?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidHost }
            let literal = authority[authority.index(after: authority.startIndex)..<close]
            let hexOrColon = literal.utf8.allSatisfy { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || $0.isHexDigit }
            guard literal.contains(":"), hexOrColon else { throw .invalidHost }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw .invalidHost }
            return (literal.lowercased(), after.isEmpty ? nil : String(after.dropFirst()))
        }
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let host = parts[0]
        // A DNS name or an IPv4 address: letters, digits, "-", ".", "_", "~" (RFC 3986 unreserved).
        let allowed = host.utf8.allSatisfy { $0.isHostCharacter }
        guard !host.isEmpty, allowed else { throw .invalidHost }
        return (host.lowercased(), parts.count == 2 ? String(parts[1]) : nil)
    }
}

extension UInt8 {
    fileprivate var isHostCharacter: Bool {
        let lower = HTTPSyntax.lowercased(self)
        return HTTPSyntax.isDigit(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) || "-._~".utf8.contains(self)
    }

    fileprivate var isHexDigit: Bool {
        HTTPSyntax.isDigit(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(HTTPSyntax.lowercased(self))
    }
}
