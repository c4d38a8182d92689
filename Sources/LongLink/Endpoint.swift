import SocketFraming

/// One server a ``LongLinkClient`` may connect to: a host (a name or a numeric IPv4 or IPv6 address)
/// and a TCP port, and, for a link carried by a WebSocket, the `ws://` or `wss://` URL of the upgrade
/// (``webSocketURL``; see <doc:LongLinkOverWebSocket>). A link's ``LongLinkClient/Configuration/endpoints``
/// lists one or more, the nodes of one service; the link moves to the next one when a connection drops
/// or a connect fails.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or numeric address (`"chat.example"`, `"127.0.0.1"`, `"::1"`), without
    /// brackets: where TCP connects (for a WebSocket endpoint, the URL's host).
    public var host: String
    /// The server's TCP port (for a WebSocket endpoint, the URL's port: 80 for `ws://`, 443 for
    /// `wss://` unless it names one).
    public var port: UInt16
    /// The WebSocket URL the link upgrades to after connecting to ``host`` and ``port`` (its host,
    /// port and path go into the request, RFC 6455 §4.1); `wss://` starts TLS first. `nil` (an
    /// endpoint made with ``init(host:port:)``): LongLink's frames go straight over TCP.
    public var webSocketURL: WebSocketURL?

    /// The server at `host` (without brackets for IPv6) and `port`, over TCP.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// The server at a `ws://` or `wss://` URL (`"wss://chat.example/link"`, `"ws://[::1]:8080/"`):
    /// LongLink's frames travel as binary WebSocket messages, one frame each.
    /// - Throws: `WebSocketURL.ParseError` when `url` is not a WebSocket URL RFC 6455 §3 allows.
    public init(webSocket url: String) throws(WebSocketURL.ParseError) {
        let parsed = try WebSocketURL(url)
        guard let port = UInt16(exactly: parsed.port) else { throw .invalidPort }
        self.host = parsed.host
        self.port = port
        self.webSocketURL = parsed
    }

    /// Hashes the host, the port and the URL's text.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(webSocketURL?.description)
    }

    /// `host:port`, with an IPv6 address (any host containing a colon) in brackets:
    /// `"127.0.0.1:7777"`, `"chat.example:7777"`, `"[::1]:7777"`; the URL for a WebSocket endpoint
    /// (`"ws://127.0.0.1:8080/link"`).
    public var description: String {
        if let webSocketURL { return webSocketURL.description }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
