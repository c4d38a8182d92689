import AsyncSocket
import Dispatch
import Foundation
import SocketFraming

/// A WebSocket connection (RFC 6455) in the compatibility layer's style: a ``delegate`` called on a
/// ``delegateQueue``, sends that may be called from any thread. Made from a TCP (or TLS) connection
/// whose upgrade is done; bytes go kernel ⇄ (TLS) ⇄ this connection's frames through the socket's one
/// read machine (a consuming read: frames are decoded in place from the socket's buffer).
///
/// The protocol's rules are ``WebSocketProtocolHandler``'s; this class does its I/O and timers on the
/// socket's event loop.
public final class WebSocket: @unchecked Sendable {
    /// Which end this is.
    public let role: WebSocketRole
    /// The TCP connection underneath.
    public let socket: TCPSocket
    /// Where ``delegate`` is called: a serial queue.
    public let delegateQueue: DispatchQueue
    private let delegateStorage = LockedValue(WeakDelegate())
    let callbacks = WebSocketSocketCallbacks()
    /// A client's settings until ``connect(to:)`` (set once, by the client initializer).
    var pendingConfiguration: ClientConfiguration {
        get { client?.configuration ?? ClientConfiguration() }
        set { clientState().configuration = newValue }
    }
    /// Loop-confined: the protocol, and the two timers.
    private var handler: WebSocketProtocolHandler
    private var closeTimer: Scheduled?
    private var keepAliveTimer: Scheduled?
    /// A client's opening handshake until it is done (nil once open, and on a server's socket).
    var opening: Opening? {
        get { client?.opening }
        set { if newValue != nil || client != nil { clientState().opening = newValue } }
    }
    /// What only a client holds (its settings, its opening handshake), boxed and nil on a server's
    /// socket: inline, these were 861 of the 1,136 bytes of every accepted connection's WebSocket
    /// (docs/BENCHMARKS.md, "WebSocket").
    private var client: ClientState?

    /// A client's own state (loop-confined once connecting, as ``opening`` was).
    final class ClientState {
        var configuration = ClientConfiguration()
        var opening: Opening?
    }

    private func clientState() -> ClientState {
        if let client { return client }
        let state = ClientState()
        client = state
        return state
    }
    /// Whether a frame read is queued, and whether reading has started.
    private var reading = false
    private var started = false

    /// The app's delegate (held weakly). Set it before the socket starts reading (in
    /// ``WebSocketListenerDelegate/listener(_:didAccept:request:)`` for an accepted one).
    public var delegate: (any WebSocketDelegate)? {
        get { delegateStorage.withLock { $0.delegate } }
        set { delegateStorage.withLock { $0.delegate = newValue } }
    }

    private struct WeakDelegate {
        weak var delegate: (any WebSocketDelegate)?
    }

    /// A WebSocket over `socket`, whose upgrade is done (bytes after the upgrade's head are the first
    /// frames), for `role`, with `handler`'s limits and timers. It starts reading at once unless
    /// `startsReading` is false (then ``startReading()`` does).
    package init(
        upgraded socket: TCPSocket, role: WebSocketRole, handler: WebSocketProtocolHandler,
        delegate: (any WebSocketDelegate)?, delegateQueue: DispatchQueue, startsReading: Bool = true
    ) {
        self.socket = socket
        self.role = role
        self.handler = handler
        self.delegateQueue = delegateQueue
        self.delegate = delegate
        callbacks.didDisconnect = { [weak self] error in self?.ended(error) }
        callbacks.didExceedHighWatermark = { [weak self] queued in
            guard let self else { return }
            tellDelegate { $0.webSocket(self, writeQueueDidExceedHighWatermark: queued) }
        }
        callbacks.didFallToLowWatermark = { [weak self] queued in
            guard let self else { return }
            tellDelegate { $0.webSocket(self, writeQueueDidFallToLowWatermark: queued) }
        }
        socket.setDelegate(callbacks, delegateQueue: nil)
        if startsReading { startReading() }
    }

    /// Starts the keep-alive timer and reading frames (once); any thread.
    package func startReading() {
        socket.eventLoop.execute { [self] in start() }
    }

    /// Sends a text message (UTF-8). Does nothing once closing has begun.
    public func send(text: String) { perform { (try? $0.send(.text(text))) ?? [] } }

    /// Sends a binary message. Does nothing once closing has begun.
    public func send(data: Data) { perform { (try? $0.send(.binary(data))) ?? [] } }

    /// Sends a Ping with `payload` (at most 125 bytes; longer ones are not sent).
    public func sendPing(_ payload: Data = Data()) { perform { (try? $0.sendPing(payload)) ?? [] } }

    /// Starts the closing handshake with `code` (nil: no code) and `reason` (at most 123 bytes of UTF-8).
    /// ``WebSocketDelegate/webSocket(_:didCloseWith:)`` follows when it is done.
    public func close(code: WebSocketCloseCode? = .normalClosure, reason: String = "") {
        perform { $0.close(code: code, reason: reason) }
    }

    // MARK: Loop side

    /// TCP ended: the end of an open connection, or a failed opening handshake.
    private func ended(_ error: SocketError?) {
        guard let opening else { return perform { $0.transportClosed() } }
        self.opening = nil
        let failure = opening.failure ?? .socket(error ?? .connectionClosed)
        tellDelegate { $0.webSocket(self, didFailToConnectWith: failure) }
    }

    private func start() {
        guard !started else { return }
        started = true
        perform { $0.start() }
        if !readGate() { readFrames() }
    }

    /// Queues the consuming read that decodes frames until the connection ends or reading is paused.
    private func readFrames() {
        reading = true
        socket.read(
            .consuming({ [weak self] bytes in self?.consume(bytes) ?? .complete(consumed: 0) }, maxLength: handler.maximumFrameLength),
            timeout: -1, tag: 0
        ) { [weak self] result in
            guard let self else { return }
            reading = false
            // Ended by the gate: a resume that came first found this read still queued, so look again.
            if case .success = result, !handler.isClosed, !readGate() { readFrames() }
        }
    }

    /// Asked on the loop after each read's frames: true stops taking frames from the socket (TCP's
    /// window then holds the peer back) until ``resumeReading()``. The async face's backpressure; set
    /// before reading starts.
    package var readGate: @Sendable () -> Bool = { false }

    /// Takes frames again, unless ``readGate`` still says to wait. Any thread: the gate is asked on the
    /// loop, so a late call cannot undo a newer decision.
    package func resumeReading() {
        socket.eventLoop.execute { [self] in
            if !reading && !handler.isClosed && opening == nil && started && !readGate() { readFrames() }
        }
    }

    /// Decodes what arrived; reading goes on until the connection is closed.
    private func consume(_ bytes: UnsafeRawBufferPointer) -> ByteConsumption {
        var outputs: [WebSocketProtocolHandler.Output] = []
        let consumed = FrameBuffer.borrowing(bytes) { buffer in outputs = handler.receive(&buffer) }.consumed
        run(outputs)
        return handler.isClosed || readGate() ? .complete(consumed: consumed) : .needMoreData(consumed: consumed)
    }

    /// Runs `step` on the handler on the loop, then its outputs.
    private func perform(_ step: @escaping @Sendable (inout WebSocketProtocolHandler) -> [WebSocketProtocolHandler.Output]) {
        guard socket.eventLoop.inEventLoop else {
            socket.eventLoop.execute { [self] in perform(step) }
            return
        }
        run(step(&handler))
    }

    private func run(_ outputs: [WebSocketProtocolHandler.Output]) {
        for output in outputs {
            switch output {
            case .write(let bytes): socket.write(bytes, withTimeout: -1, tag: 0)
            case .message(let message): tellDelegate { $0.webSocket(self, didReceive: message) }
            case .pong(let payload): tellDelegate { $0.webSocket(self, didReceivePong: payload) }
            case .closeTransport(let afterWriting):
                if afterWriting { socket.disconnectAfterWriting() } else { socket.disconnect() }
            case .startCloseTimer(let delay):
                closeTimer?.cancel()
                closeTimer = socket.eventLoop.scheduleTask(in: delay) { [weak self] in self?.perform { $0.closeTimerFired() } }
            case .cancelCloseTimer:
                closeTimer?.cancel()
                closeTimer = nil
            case .startKeepAliveTimer(let delay):
                keepAliveTimer?.cancel()
                keepAliveTimer = socket.eventLoop.scheduleTask(in: delay) { [weak self] in self?.perform { $0.keepAliveTimerFired() } }
            case .closed(let result):
                closeTimer?.cancel()
                keepAliveTimer?.cancel()
                closeTimer = nil
                keepAliveTimer = nil
                tellDelegate { $0.webSocket(self, didCloseWith: result) }
            }
        }
    }

    func tellDelegate(_ call: @escaping @Sendable (any WebSocketDelegate) -> Void) {
        delegateQueue.async { [self] in
            guard let delegate else { return }
            call(delegate)
        }
    }
}

/// The socket's delegate for a ``WebSocket``: only its end matters (reads are consuming reads with
/// their own handler). Set before use, then only read.
final class WebSocketSocketCallbacks: TCPSocketDelegate, @unchecked Sendable {
    var didConnect: () -> Void = {}
    var didSecure: () -> Void = {}
    var didDisconnect: (SocketError?) -> Void = { _ in }
    var didExceedHighWatermark: (Int) -> Void = { _ in }
    var didFallToLowWatermark: (Int) -> Void = { _ in }

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) { didConnect() }
    func socketDidSecure(_ sock: TCPSocket) { didSecure() }
    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) { didDisconnect(err) }
    func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) { didExceedHighWatermark(queuedBytes) }
    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) { didFallToLowWatermark(queuedBytes) }
}
