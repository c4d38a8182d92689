import AsyncSocket
import Dispatch
import Foundation
import SocketFraming

/// Why a client's ``WebSocket/connect(to:)`` did not open.
public enum WebSocketConnectError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a `ws://` or `wss://` URL that RFC 6455 §3 allows.
    case invalidURL(String)
    /// TCP (or TLS) failed: refused, timed out, a certificate not trusted, closed during the handshake.
    case socket(SocketError)
    /// The server's answer is not an HTTP/1.1 response head (or is over the size limit).
    case badResponse(HTTPParseError)
    /// The server's answer refused or broke the opening handshake (a redirect, another status, a wrong
    /// `Sec-WebSocket-Accept`, a subprotocol or extension not offered).
    case handshake(WebSocketClientHandshakeError)

    public var description: String {
        switch self {
        case .invalidURL(let url): return "not a WebSocket URL: \(url)"
        case .socket(let error): return "\(error)"
        case .badResponse(let error): return "bad handshake answer: \(error)"
        case .handshake(let error): return "\(error)"
        }
    }
}

extension WebSocket {
    /// How a client connects (``WebSocket/init(client:delegate:delegateQueue:group:)``).
    public struct ClientConfiguration: Sendable {
        /// Subprotocols offered, in order of preference (`Sec-WebSocket-Protocol`). Default none.
        public var subprotocols: [String] = []
        /// Extra request headers (an `Origin`, a token). Default none.
        public var headers = HTTPHeaders()
        /// How long TCP's connect may take (Happy Eyeballs across the host's addresses): default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// TLS for `wss://`: default `TLSConfiguration.client(peerName:)` for the URL's host (verified
        /// against the system's trust store).
        public var tls: TLSConfiguration?
        /// The most bytes of the server's answer head: default 8 KiB.
        public var maxHeadBytes = HTTPResponseHeadParser.defaultMaxHeadBytes
        /// The protocol's settings once open (limits, close timeout, keep-alive), for the client role.
        public var connection = WebSocketProtocolHandler(role: .client)
        /// Offer permessage-deflate (RFC 7692) with these settings; default nil, not offered. The server's
        /// answer is checked against the offer: one that does not fit fails the connect with
        /// ``WebSocketConnectError/handshake(_:)`` (`.unacceptableExtension`), after a Close frame 1010.
        public var deflate: PerMessageDeflate.ClientConfiguration?

        /// The defaults above.
        public init() {}
    }

    /// A client's opening handshake in progress (loop-confined).
    struct Opening {
        let url: WebSocketURL
        let handshake: WebSocketClientHandshake
        let configuration: ClientConfiguration
        var failure: WebSocketConnectError?
    }

    /// A client WebSocket, not connected yet: call ``connect(to:)``. Its delegate is called on
    /// `delegateQueue`, or on the socket's event loop thread when it is `nil` (``delegateQueue``).
    public convenience init(
        client configuration: ClientConfiguration = ClientConfiguration(), delegate: any WebSocketDelegate,
        delegateQueue: DispatchQueue?, group: EventLoopGroup = .shared
    ) {
        let socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group)
        self.init(
            upgraded: socket, role: .client, handler: configuration.connection, delegate: delegate, delegateQueue: delegateQueue,
            startsReading: false)
        pendingConfiguration = configuration
    }

    /// Connects to `url` (`ws://host[:port]/path?query`, `wss://…`; IPv6 literals in brackets), sends the
    /// opening handshake (RFC 6455 §4.1) and checks the answer. The delegate then gets
    /// ``WebSocketDelegate/webSocketDidOpen(_:subprotocol:extensions:)``, or
    /// ``WebSocketDelegate/webSocket(_:didFailToConnectWith:)``. Redirects are not followed.
    /// - Throws: ``WebSocketConnectError/invalidURL(_:)``, or `.socket` when the connect cannot start.
    public func connect(to url: String) throws(WebSocketConnectError) {
        let parsed: WebSocketURL
        do { parsed = try WebSocketURL(url) } catch { throw .invalidURL(url) }
        let configuration = pendingConfiguration
        let handshake = WebSocketClientHandshake(
            url: parsed, subprotocols: configuration.subprotocols, deflate: configuration.deflate, headers: configuration.headers)
        socket.eventLoop.execute { [self] in
            opening = Opening(url: parsed, handshake: handshake, configuration: configuration, failure: nil)
        }
        do {
            try socket.connect(toHost: parsed.host, onPort: UInt16(parsed.port), withTimeout: configuration.connectTimeout.secondsValue)
        } catch {
            throw .socket(error)
        }
    }

    /// TCP is connected (on the loop): TLS first for `wss://`, then the request.
    func connected() {
        guard let opening else { return }
        guard opening.url.isSecure else { return sendRequest() }
        socket.startTLS(opening.configuration.tls ?? .client(peerName: opening.url.host))
    }

    /// Writes the request and reads the answer's head (on the loop; after TLS for `wss://`).
    func sendRequest() {
        guard let opening else { return }
        socket.write(Data(opening.handshake.request.bytes), withTimeout: -1, tag: 0)
        let configuration = opening.configuration
        socket.readHTTPHead(
            with: HTTPResponseHeadParser(maxHeadBytes: configuration.maxHeadBytes), maxBytes: configuration.maxHeadBytes,
            timeout: configuration.connectTimeout.secondsValue
        ) { [weak self] result in
            guard let result else { return }  // the socket's end reports it
            self?.answered(result)
        }
    }

    /// The answer's head arrived (or could not be read): open, or fail.
    private func answered(_ result: Result<HTTPResponseHead, HTTPParseError>) {
        guard let opening else { return }
        do throws(WebSocketConnectError) {
            let head: HTTPResponseHead
            switch result {
            case .success(let answer): head = answer
            case .failure(let error): throw .badResponse(error)
            }
            let accepted: WebSocketClientHandshake.Accepted
            do { accepted = try opening.handshake.validate(head) } catch { throw .handshake(error) }
            self.opening = nil
            if let agreement = accepted.deflate {
                perform { handler in
                    handler.enablePerMessageDeflate(agreement)
                    return []
                }
            }
            client?.extensions.withLock { $0 = accepted.extensions }
            tellDelegate { $0.webSocketDidOpen(self, subprotocol: accepted.subprotocol, extensions: accepted.extensions) }
            openedRunDeferred()
            startReading()
        } catch {
            self.opening?.failure = error
            guard case .handshake(let refusal) = error, let code = refusal.closeCode else { return socket.disconnect() }
            failOpenedConnection(code: code, reason: refusal.description)
        }
    }

    /// The server switched protocols but its extensions cannot be used: a Close frame with `code` (1010)
    /// and `reason` (cut to 123 bytes), then TCP closes (RFC 6455 §7.1.7, §7.4.1).
    private func failOpenedConnection(code: WebSocketCloseCode, reason: String) {
        var reason = reason
        while reason.utf8.count > WebSocketCloseHandshake.maxReasonBytes { reason.removeLast() }
        let payload = (try? WebSocketClosePayload(code: code, reason: reason).payload()) ?? Data()
        if let frame = try? WebSocketFrameEncoder(role: .client).encode(WebSocketFrame(opcode: .close, payload: payload)) {
            socket.write(frame, withTimeout: -1, tag: 0)
        }
        socket.disconnectAfterWriting()
    }
}

// MARK: What the app asks for before the opening handshake is done

extension WebSocket {
    /// A request of the app's that waits for a client's opening handshake.
    enum DeferredRequest {
        /// A text or binary message (or a control message sent as one), with its timeout and tag.
        case send(WebSocketMessage, timeout: TimeInterval, tag: Int)
        /// A Ping or Pong.
        case control(@Sendable (inout WebSocketProtocolHandler) -> [WebSocketProtocolHandler.Output])
    }

    /// Whether `request` was kept for later (a client not open yet: no frame may go out before the
    /// server's 101, RFC 6455 §4.1) or refused (its opening failed: a send is rejected with `.closing`).
    /// Loop thread.
    func deferredUntilOpen(_ request: DeferredRequest) -> Bool {
        guard let client, !client.isOpen else { return false }
        if client.hasEnded {
            reject(request)
        } else {
            client.deferred.append(request)
        }
        return true
    }

    /// Runs `step` on the handler now, or once a client is open.
    func performOnceOpen(_ step: @escaping @Sendable (inout WebSocketProtocolHandler) -> [WebSocketProtocolHandler.Output]) {
        guard socket.eventLoop.inEventLoop else {
            socket.eventLoop.execute { [self] in performOnceOpen(step) }
            return
        }
        if deferredUntilOpen(.control(step)) { return }
        perform(step)
    }

    /// The server's 101 was accepted: what waited goes out, in order. Loop thread.
    func openedRunDeferred() {
        guard let client else { return }
        client.isOpen = true
        let deferred = client.deferred
        client.deferred = []
        for request in deferred {
            switch request {
            case .send(let message, let timeout, let tag): send(message, timeout: timeout, tag: tag)
            case .control(let step): perform(step)
            }
        }
    }

    /// The opening ended without opening: what waited is refused, and so is what comes later. Loop thread.
    func endOpening() {
        guard let client, !client.isOpen else { return }
        client.hasEnded = true
        let deferred = client.deferred
        client.deferred = []
        deferred.forEach(reject)
    }

    /// The app closed a client that was not open yet: it stops connecting (the socket's end reports
    /// ``WebSocketDelegate/webSocket(_:didFailToConnectWith:)`` if it had started). Loop thread.
    func abandonOpening() {
        socket.disconnect()
        endOpening()
    }

    private func reject(_ request: DeferredRequest) {
        guard case .send(_, _, let tag) = request else { return }
        tellDelegate { $0.webSocket(self, didRejectSendWithTag: tag, error: .closing) }
    }
}
