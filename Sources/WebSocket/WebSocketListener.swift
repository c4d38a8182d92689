import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import SocketLog

/// Accepts WebSocket connections on a TCP port (RFC 6455 §4.2): reads each connection's HTTP/1.1
/// request head (at most ``Configuration/maxHeadBytes`` bytes within ``Configuration/handshakeTimeout``),
/// checks the upgrade, asks the app (``WebSocketListenerDelegate``), answers `101 Switching Protocols`
/// or the error (400, 403, 426, 431, 505), and hands the app a ``WebSocket`` (or, when the app takes
/// the connection over, its socket as it is: ``WebSocketListenerDelegate/listener(_:shouldTakeOver:)``). Requests that are not
/// upgrades go to the app as they are, so one port can serve a page and the socket. With
/// ``Configuration/tls`` every connection is TLS from its first byte (`wss://`, `https://`).
///
/// Delegate calls arrive on `delegateQueue`, or on the accepted socket's event loop thread when it is
/// `nil` (`TCPSocket`'s convention); ``start()`` and ``stop()`` may be called from any thread.
public final class WebSocketListener: @unchecked Sendable {
    /// Where and how it listens.
    public struct Configuration: Sendable {
        /// The interface: default 127.0.0.1.
        public var host = "127.0.0.1"
        /// The port: 0 for one the kernel picks (``WebSocketListener/port``).
        public var port: UInt16
        /// The most bytes of a request head: default 8 KiB (431 beyond).
        public var maxHeadBytes = HTTPRequestHeadParser.defaultMaxHeadBytes
        /// How long a client has to send its whole request head: default 10 s (then the connection closes).
        public var handshakeTimeout: Duration = .seconds(10)
        /// Each connection's protocol settings (limits, close timeout, keep-alive), for the server role.
        public var connection = WebSocketProtocolHandler(role: .server)
        /// permessage-deflate (RFC 7692): nil (the default) neither offers nor accepts it; set, the
        /// client's first acceptable offer is accepted with these settings (`PerMessageDeflate.ServerConfiguration()`'s
        /// defaults keep an idle connection's zlib state small: the module documentation's "Compression").
        public var deflate: PerMessageDeflate.ServerConfiguration?
        /// TLS for every connection (`wss://`, and `https://` for the ordinary requests the app answers):
        /// `TCPSocket/startTLS(_:)` with these server settings as soon as a connection is accepted,
        /// before its request head is read, so everything on the port, the listener's own answers too,
        /// goes through TLS. A client that does not complete the handshake within the settings'
        /// `handshakeTimeout` is disconnected. `nil` (the default): plaintext (`ws://`).
        public var tls: TLSConfiguration?
        /// Fields appended to every answer the listener writes itself: its own refusals (`400`, `426`,
        /// `431`, `505` for a request that is not a valid upgrade), the app's refusals
        /// (``WebSocketUpgradeDecision/refuse(statusCode:text:)``: `403`, `404`, …), the default `426`
        /// for an ordinary request (``WebSocketListenerDelegate/listener(_:didReceive:on:)``) and the
        /// `101` of an upgrade it accepts (after the app's `headers`). Answers the app writes itself
        /// (ordinary requests it handles, connections it takes over) are the app's to complete. For a
        /// port that also serves pages: `X-Content-Type-Options: nosniff` and the like, so no answer
        /// of the port is sniffed or framed. Names and values must be valid (RFC 9110 §5.1, §5.5:
        /// `HTTPHeaders.isValidField(_:)`). Default none.
        public var responseHeaders = HTTPHeaders()

        /// A configuration listening on `host`:`port` with the defaults above.
        public init(host: String = "127.0.0.1", port: UInt16) {
            self.host = host
            self.port = port
        }
    }

    /// Where and how it listens, as given.
    public let configuration: Configuration
    /// Where the delegate is called, and the accepted ``WebSocket``s' delegates by default: a serial
    /// queue, or `nil` for the event loop thread of the connection concerned (each accepted socket's
    /// loop; then every call is inline on that loop and must not block, and a ``WebSocket``'s
    /// delegate is called on its loop too, with no thread hop per message: ``WebSocket/delegateQueue``).
    public let delegateQueue: DispatchQueue?
    private weak var delegate: (any WebSocketListenerDelegate)?
    private let listener: TCPSocket
    private let callbacks = ListenerCallbacks()

    /// A listener that is not listening yet; call ``start()``. `delegateQueue` `nil` calls the delegate
    /// (and the accepted ``WebSocket``s' delegates) on each connection's event loop thread.
    public init(
        configuration: Configuration, delegate: any WebSocketListenerDelegate, delegateQueue: DispatchQueue?,
        group: EventLoopGroup = .shared
    ) {
        self.configuration = configuration
        self.delegate = delegate
        self.delegateQueue = delegateQueue
        listener = TCPSocket(delegate: callbacks, delegateQueue: nil, group: group)
        callbacks.didAccept = { [weak self] socket in self?.accepted(socket) }
    }

    /// Starts listening.
    /// - Throws: `SocketError` when the address cannot be bound.
    public func start() throws(SocketError) {
        try listener.accept(onInterface: configuration.host, port: configuration.port)
    }

    /// The port listened on (the kernel's choice for port 0).
    public var port: UInt16 { listener.localPort }

    /// Stops accepting; open WebSockets go on.
    public func stop() { listener.disconnect() }

    /// Stops accepting and returns once the listening socket is closed (connects are refused from then on).
    package func stopAndWait() async {
        stop()
        await withCheckedContinuation { continuation in listener.eventLoop.execute { continuation.resume() } }
    }

    // MARK: The upgrade, on the accepted socket's loop

    private func accepted(_ socket: TCPSocket) {
        // A barrier: the head's read below waits for the handshake and goes through TLS.
        if let tls = configuration.tls { socket.startTLS(tls) }
        socket.readHTTPHead(
            with: HTTPRequestHeadParser(maxHeadBytes: configuration.maxHeadBytes), maxBytes: configuration.maxHeadBytes,
            timeout: configuration.handshakeTimeout.secondsValue
        ) { [weak self] result in
            switch result {
            case .success(let head)?: self?.upgrade(socket, head)
            case .failure(let error)?: self?.answer(socket, error.response)
            case nil: socket.disconnect()
            }
        }
    }

    private func upgrade(_ socket: TCPSocket, _ head: HTTPRequestHead) {
        switch WebSocketServerHandshake.validate(head) {
        case .refused(let refusal): answer(socket, refusal.response)
        case .notUpgrade(let request):
            onDelegateQueue { [self] in delegate?.listener(self, didReceive: request, on: socket) }
        case .upgrade(let request):
            onDelegateQueue { [self] in
                guard let delegate else { return socket.disconnect() }
                if delegate.listener(self, shouldTakeOver: request) {
                    return delegate.listener(self, didTakeOver: socket, request: request)
                }
                switch delegate.listener(self, shouldAccept: request) {
                case .refuse(let statusCode, let text):
                    answer(socket, HTTPResponse.plainText(statusCode: statusCode, text: text))
                case .accept(let subprotocol, let headers):
                    let subprotocol = subprotocol.flatMap { request.subprotocols.contains($0) ? $0 : nil }
                    let (handler, extensions) = configuration.negotiate(request)
                    var extraHeaders = headers
                    for field in configuration.responseHeaders { extraHeaders.append(name: field.name, value: field.value) }
                    let answer = request.accept(subprotocol: subprotocol, extensions: extensions, extraHeaders: extraHeaders)
                    socket.write(Data(answer.bytes), withTimeout: -1, tag: 0)
                    let webSocket = WebSocket(
                        upgraded: socket, role: .server, handler: handler, delegate: nil,
                        delegateQueue: delegateQueue, startsReading: false, extensions: extensions)
                    delegate.listener(self, didAccept: webSocket, request: request)
                    webSocket.startReading()
                }
            }
        }
    }

    /// Runs `body` on ``delegateQueue``, or at once (on the accepted socket's loop) when it is `nil`.
    private func onDelegateQueue(_ body: @escaping @Sendable () -> Void) {
        guard let delegateQueue else { return body() }
        delegateQueue.async(execute: body)
    }

    /// Writes `response` with ``Configuration/responseHeaders`` appended, then closes `socket` once it
    /// is written. Any thread.
    func answer(_ socket: TCPSocket, _ response: HTTPResponse) {
        var response = response
        for field in configuration.responseHeaders { response.head.headers.append(name: field.name, value: field.value) }
        socket.write(Data(response.bytes), withTimeout: -1, tag: 0)
        socket.disconnectAfterWriting()
    }
}

/// The listening socket's delegate: only accepts matter.
private final class ListenerCallbacks: TCPSocketDelegate, @unchecked Sendable {
    var didAccept: (TCPSocket) -> Void = { _ in }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) { didAccept(newSocket) }
}

extension Duration {
    /// In seconds, for the socket's `TimeInterval` timeouts.
    var secondsValue: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
