import AsyncSocket
import Foundation
import SocketFraming
import WebSocket

extension LongLinkServer {
    /// Where and how a ``LongLinkServer`` accepts sessions over WebSocket upgrades
    /// (``Configuration/webSocket``, <doc:LongLinkOverWebSocket>), beside its TCP port: on the same
    /// interface (``Configuration/host``), with the same TLS (``Configuration/tls``, started before the
    /// request is read: `wss://`), limits and timeouts. A connection counts toward
    /// ``Configuration/maxConnections`` once its upgrade is done (beyond it: the farewell, then a Close
    /// frame with 1013); until then ``handshakeTimeout`` bounds it.
    public struct WebSocketConfiguration: Sendable {
        /// The port upgrades are accepted on; 0 = a free port (read it from ``LongLinkServer/webSocketPort``).
        public var port: UInt16
        /// The request target an upgrade must name (`"/link"`); another is answered `404 Not Found`.
        /// `nil` (the default): any.
        public var path: String?
        /// The most bytes of a request head; a longer one is answered `431` (RFC 6585 §5). Default 8 KiB.
        public var maxHeadBytes = HTTPRequestHeadParser.defaultMaxHeadBytes
        /// How long a client has for its whole request head, from its connect; then the connection is
        /// closed. Default 10 s.
        public var handshakeTimeout: Duration = .seconds(10)

        /// Upgrades on `port` at `path` (nil: any) with the defaults above.
        public init(port: UInt16, path: String? = nil) {
            self.port = port
            self.path = path
        }
    }

    /// The WebSocket port listened on (the actual one when configured with 0); 0 without
    /// ``Configuration/webSocket`` or before ``start()``.
    public var webSocketPort: UInt16 { webSocketListener?.localPort ?? 0 }

    /// A connection to the WebSocket port: TLS if configured, the request head (RFC 6455 §4.2.1), then
    /// `101` and a session, or an HTTP error answer and close (400, 404, 426, 431, 505).
    func upgrade(_ socket: TCPSocket) {
        guard let options = configuration.webSocket else { return socket.disconnect() }
        if let tls = configuration.tls { socket.startTLS(tls) }
        socket.readHTTPHead(
            with: HTTPRequestHeadParser(maxHeadBytes: options.maxHeadBytes), maxBytes: options.maxHeadBytes,
            timeout: Double(options.handshakeTimeout.nanosecondsValue) / 1e9
        ) { [weak self] result in
            switch result {
            case .success(let head)?: self?.upgrade(socket, head, options)
            case .failure(let error)?: Self.answer(socket, error.response)
            case nil: socket.disconnect()
            }
        }
    }

    private func upgrade(_ socket: TCPSocket, _ head: HTTPRequestHead, _ options: WebSocketConfiguration) {
        switch WebSocketServerHandshake.validate(head) {
        case .refused(let refusal): Self.answer(socket, refusal.response)
        case .notUpgrade:
            let extra: HTTPHeaders = [("Upgrade", "websocket"), ("Sec-WebSocket-Version", WebSocketHandshake.version)]
            Self.answer(socket, .plainText(statusCode: 426, text: "this port speaks LongLink over WebSocket", extraHeaders: extra))
        case .upgrade(let request):
            if let path = options.path, request.target != path {
                return Self.answer(socket, .plainText(statusCode: 404, text: "no LongLink at \(request.target)"))
            }
            acceptUpgrade(socket, request)
        }
    }

    /// Makes a session of a connection whose upgrade request another server read and checked (a web
    /// port that serves pages and takes the upgrades at one path over, say: a `WebSocketListener`
    /// delegate's `listener(_:shouldTakeOver:)`): answers `101 Switching Protocols` for `request` (no
    /// subprotocol, no extension: each LongLink frame one binary message, <doc:LongLinkOverWebSocket>),
    /// then the connection is a session like those of ``Configuration/webSocket``'s port, with the same
    /// limits (``Configuration/maxQueuedBytesPerSession`` too: the socket's write high watermark is set
    /// to it), deadlines (counted from now) and ``Configuration/maxConnections`` (beyond it: the
    /// farewell, then a Close frame with 1013).
    ///
    /// `socket` must be connected, with nothing written to it yet and the bytes after the request head
    /// still unread in it (they are read as the first frames); TLS, if any, is already started on it by
    /// that server (this server's ``Configuration/tls`` is not applied). The session takes over the
    /// socket's delegate. Any thread.
    public func adoptWebSocket(_ socket: TCPSocket, request: WebSocketUpgradeRequest) {
        adoptWebSocket(socket, request: request, responseHeaders: HTTPHeaders())
    }

    /// ``adoptWebSocket(_:request:)`` with `responseHeaders` appended to the `101` (that server's fields
    /// for every answer of its port, say: ChatWeb's security headers; valid names and values, RFC 9110
    /// §5.1, §5.5). Any thread.
    public func adoptWebSocket(_ socket: TCPSocket, request: WebSocketUpgradeRequest, responseHeaders: HTTPHeaders) {
        // On the socket's loop: a disconnect before the session has its delegate went to the old one
        // (nothing to do then); one after it reaches the session.
        let adopt: @Sendable () -> Void = { [self] in
            guard socket.isConnected else { return }
            acceptUpgrade(socket, request, responseHeaders: responseHeaders)
        }
        if socket.eventLoop.inEventLoop { adopt() } else { socket.eventLoop.execute(adopt) }
    }

    /// `101` (with `responseHeaders`) for `request` on `socket` and a session over it (on the socket's loop).
    private func acceptUpgrade(_ socket: TCPSocket, _ request: WebSocketUpgradeRequest, responseHeaders: HTTPHeaders = HTTPHeaders()) {
        // The slow-consumer bound, as on a socket accepted by this server's own listeners (which hand
        // it on): one adopted from another server's listener has that listener's (none, by default),
        // and a client that stops reading could make the queue grow without bound (its Pongs too).
        socket.writeHighWatermark = configuration.maxQueuedBytesPerSession
        // No subprotocol, no extension: the frames go as they are.
        socket.write(Data(request.accept(extraHeaders: responseHeaders).bytes), withTimeout: -1, tag: 0)
        let channel = LinkWebSocketChannel(
            socket: socket, role: .server, maxMessageBytes: codec.makeDecoder().maximumFrameLength, controlTag: 0)
        accepted(socket, webSocket: channel)
    }

    private static func answer(_ socket: TCPSocket, _ response: HTTPResponse) {
        socket.write(Data(response.bytes), withTimeout: -1, tag: 0)
        socket.disconnectAfterWriting()
    }
}

extension LinkRefusal {
    /// The close code a WebSocket session is closed with after the refusal's farewell (RFC 6455 §7.4.1):
    /// 1013 for a full server, 1001 when it shuts down, 1008 otherwise.
    var webSocketCloseCode: WebSocketCloseCode {
        switch self {
        case .serverFull: return .tryAgainLater
        case .shuttingDown: return .goingAway
        case .protocolError, .admissionTimeout, .frameTimeout: return .policyViolation
        }
    }
}
