import SocketFraming

/// Which `Origin`s may open the chat over WebSocket (`/chat`): the web port's own origin and those the
/// operator allows (`im-server --web-allow-origin`), as values (no socket).
///
/// Why: a browser sends cookies and opens WebSockets to any site from any page, and WebSocket has no
/// same-origin policy of its own (RFC 6455 §10.2): without this check a page on another site could
/// open the chat in a visitor's browser, from the visitor's network (a server on loopback or a LAN the
/// attacker cannot reach): cross-site WebSocket hijacking. Browsers always send `Origin` on an upgrade
/// and pages cannot forge it, so a foreign one is refused (`403`). A request without `Origin` does not
/// come from a page (im-client, scripts): allowed, as it could have connected to the TCP port anyway.
///
/// The own origin is fixed by the configured interface and port (`http://127.0.0.1:8080`; for a
/// loopback interface also `http://localhost:8080` and the other loopback address, `http://[::1]:8080`),
/// never taken from the request's `Host`: a page of a DNS-rebinding site (`http://evil.example:8080`
/// resolving to 127.0.0.1) sends its own name in both `Host` and `Origin`, and is refused. Serving on a
/// wildcard interface (`0.0.0.0`, `::`), the server knows no name of its own: allow the page's origin
/// with `--web-allow-origin`.
public struct WebOrigins: Sendable, Equatable {
    /// The serialized origins allowed (RFC 6454 §6.2: `scheme://host[:port]`, lower case, the port left
    /// out when it is the scheme's default).
    public private(set) var allowed: Set<String>

    /// The origins of a server at `host`:`port` (`https` when `isSecure`), plus `extra` (each as
    /// ``normalized(_:)`` makes it; invalid ones are ignored: check them with ``isValid(_:)`` first).
    public init(host: String?, port: UInt16, isSecure: Bool = false, extra: [String] = []) {
        var allowed = Set<String>()
        let scheme = isSecure ? "https" : "http"
        for name in Self.names(of: host) { allowed.insert(Self.serialize(scheme: scheme, host: name, port: port)) }
        for origin in extra { if let origin = Self.normalized(origin) { allowed.insert(origin) } }
        self.allowed = allowed
    }

    /// Whether an upgrade with `origin` (its `Origin` field; nil when absent) may open the chat.
    public func allows(_ origin: String?) -> Bool {
        guard let origin else { return true }
        guard let normalized = Self.normalized(origin) else { return false }
        return allowed.contains(normalized)
    }

    /// `origin` as browsers serialize it: lower case, no trailing `/`, no default port; nil when it is
    /// not `http://host[:port]` or `https://host[:port]` (`null`, a path, a user name, an empty host).
    /// The authority is read as ``WebSocketURL`` reads it (the same hosts, ports and refusals), an
    /// origin's `http`/`https` standing for `ws`/`wss`.
    public static func normalized(_ origin: String) -> String? {
        guard let separator = origin.range(of: "://") else { return nil }
        let scheme = origin[..<separator.lowerBound].lowercased()
        let webSocketScheme: String
        switch scheme {
        case "http": webSocketScheme = "ws"
        case "https": webSocketScheme = "wss"
        default: return nil
        }
        guard let url = try? WebSocketURL(webSocketScheme + origin[separator.lowerBound...]), url.resourceName == "/" else {
            return nil
        }
        return "\(scheme)://\(url.hostHeader)"
    }

    /// Whether `origin` is an origin ``normalized(_:)`` accepts (for `--web-allow-origin`).
    public static func isValid(_ origin: String) -> Bool { normalized(origin) != nil }

    /// `scheme://host:port`, the port left out when it is the scheme's default (80, 443), an IPv6
    /// address in brackets.
    static func serialize(scheme: String, host: String, port: UInt16) -> String {
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let isDefault = (scheme == "http" && port == 80) || (scheme == "https" && port == 443)
        return isDefault ? "\(scheme)://\(name.lowercased())" : "\(scheme)://\(name.lowercased()):\(port)"
    }

    /// The names a page of this server is loaded under: the interface, and `localhost` beside a
    /// loopback address (and the loopback addresses beside `localhost`); none for a wildcard.
    static func names(of host: String?) -> [String] {
        guard let host, !["", "0.0.0.0", "::", "[::]"].contains(host) else { return [] }
        if ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased()) { return ["127.0.0.1", "[::1]", "localhost"] }
        return [host]
    }
}
