import AsyncSocket
import Dispatch
import Foundation
import SocketFraming

/// A WebSocket connection (RFC 6455) in the compatibility layer's style: a ``delegate`` called on a
/// ``delegateQueue`` (or on the socket's event loop thread when it is `nil`, as `TCPSocket`'s), sends
/// that may be called from any thread. Made from a TCP (or TLS) connection
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
    /// Where ``delegate`` is called: a serial queue, or `nil` for the socket's event loop thread
    /// (`TCPSocket`'s convention). On the loop, calls come inline as frames are decoded, and what the
    /// delegate sends from within them goes out in the same `sendmsg(2)` as the rest of that read's
    /// answers, with no thread hop; such a delegate must not block.
    public let delegateQueue: DispatchQueue?
    private let delegateStorage = LockedValue(WeakDelegate())
    let callbacks = WebSocketSocketCallbacks()
    /// A client's settings until ``connect(to:)`` (set once, by the client initializer).
    var pendingConfiguration: ClientConfiguration {
        get { client?.configuration ?? ClientConfiguration() }
        set { clientState().configuration = newValue }
    }
    /// Loop-confined (so unchecked for exclusivity: no runtime access record per use): the protocol, and
    /// the two timers.
    @exclusivity(unchecked) private var handler: WebSocketProtocolHandler
    private var closeTimer: Scheduled?
    private var keepAliveTimer: Scheduled?
    /// The extensions agreed in the opening handshake (``extensions``).
    let agreedExtensions = LockedValue<[WebSocketExtension]>([])
    /// A client's opening handshake until it is done (nil once open, and on a server's socket).
    var opening: Opening? {
        get { client?.opening }
        set { if newValue != nil || client != nil { clientState().opening = newValue } }
    }
    /// What only a client holds (its settings, its opening handshake), boxed and nil on a server's
    /// socket: inline, these were 861 of the 1,136 bytes of every accepted connection's WebSocket
    /// (docs/BENCHMARKS.md, "WebSocket").
    var client: ClientState?

    /// A client's own state (loop-confined once connecting, as ``opening`` was).
    final class ClientState {
        var configuration = ClientConfiguration()
        var opening: Opening?
        /// The server's 101 has been checked: frames may go out. Before it, none may (RFC 6455 §4.1).
        var isOpen = false
        /// The opening handshake failed, or the app closed before it was done: nothing will go out.
        var hasEnded = false
        /// What the app asked for before it was open, in order: done once open (``WebSocket/openedRunDeferred()``).
        var deferred: [DeferredRequest] = []
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
    /// The app's sends not yet written, and the error TCP ended with (for a 1006 result).
    @exclusivity(unchecked) private var pendingSends = WebSocketPendingSends()
    private var transportError: SocketError?

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
        delegate: (any WebSocketDelegate)?, delegateQueue: DispatchQueue?, startsReading: Bool = true
    ) {
        self.socket = socket
        self.role = role
        self.handler = handler
        self.delegateQueue = delegateQueue
        self.delegate = delegate
        callbacks.didDisconnect = { [weak self] error in self?.ended(error) }
        callbacks.didExceedHighWatermark = { [weak self] queued in
            guard let self else { return }
            writabilityChanged?(false)
            tellDelegate { $0.webSocket(self, writeQueueDidExceedHighWatermark: queued) }
        }
        callbacks.didFallToLowWatermark = { [weak self] queued in
            guard let self else { return }
            writabilityChanged?(true)
            tellDelegate { $0.webSocket(self, writeQueueDidFallToLowWatermark: queued) }
        }
        callbacks.didWrite = { [weak self] writeTag in self?.wrote(writeTag) }
        callbacks.didRejectWrite = { [weak self] writeTag in self?.rejectedWrite(writeTag) }
        socket.setDelegate(callbacks, delegateQueue: nil)
        if startsReading { startReading() }
    }

    /// Starts the keep-alive timer and reading frames (once); any thread.
    package func startReading() {
        socket.eventLoop.execute { [self] in start() }
    }

    /// Sends `text` as a text message (UTF-8), after the messages sent before it, as GCDAsyncSocket's
    /// `writeData:withTimeout:tag:`; any thread. Once its frame is with the kernel the delegate gets
    /// ``WebSocketDelegate/webSocket(_:didSendMessageWithTag:)`` with `tag`.
    ///
    /// - Parameters:
    ///   - text: the message; sent as one frame of its UTF-8 bytes.
    ///   - timeout: seconds from when the message's frame becomes the socket's current write; negative
    ///     (the default) means none. When it expires the connection fails: TCP is closed and
    ///     ``WebSocketDelegate/webSocket(_:didCloseWith:)`` reports 1006 with the error
    ///     `SocketError.writeTimeout(tag:)` carrying `tag`.
    ///   - tag: handed back in the delegate's calls, never sent. Default 0.
    ///
    /// Once closing has begun (this side's Close sent, or the peer's received, or the connection
    /// ended) the message is not sent: ``WebSocketDelegate/webSocket(_:didRejectSendWithTag:error:)``
    /// says so with ``WebSocketProtocolHandler/SendError/closing`` (RFC 6455 §5.5.1: no data frame
    /// after a Close).
    public func send(text: String, withTimeout timeout: TimeInterval = -1, tag: Int = 0) {
        send(.text(text), timeout: timeout, tag: tag)
    }

    /// Sends `data` as a binary message; as ``send(text:withTimeout:tag:)``.
    public func send(data: Data, withTimeout timeout: TimeInterval = -1, tag: Int = 0) {
        send(.binary(data), timeout: timeout, tag: tag)
    }

    /// Sends a Ping with `payload` (at most 125 bytes; longer ones are not sent). A client's goes out
    /// once it is open.
    public func sendPing(_ payload: Data = Data()) { performOnceOpen { (try? $0.sendPing(payload)) ?? [] } }

    /// Sends an unsolicited Pong with `payload` (at most 125 bytes; longer ones are not sent): a one-way
    /// heartbeat the peer does not answer (RFC 6455 §5.5.3). Pings from the peer are answered on their own.
    public func sendPong(_ payload: Data = Data()) { performOnceOpen { (try? $0.send(.pong(payload))) ?? [] } }

    /// Starts the closing handshake with `code` (nil: no code) and `reason` (at most 123 bytes of UTF-8;
    /// a longer one is cut to the whole characters that fit, RFC 6455 §5.5).
    /// ``WebSocketDelegate/webSocket(_:didCloseWith:)`` follows when it is done. A client not open yet
    /// stops connecting instead: ``WebSocketDelegate/webSocket(_:didFailToConnectWith:)`` follows, and its
    /// sends waiting for the opening are rejected.
    public func close(code: WebSocketCloseCode? = .normalClosure, reason: String = "") {
        guard socket.eventLoop.inEventLoop else {
            socket.eventLoop.execute { [self] in close(code: code, reason: reason) }
            return
        }
        if let client, !client.isOpen { return abandonOpening() }
        perform { $0.close(code: code, reason: reason) }
    }

    // MARK: Loop side

    /// Whether sends with no timeout are reported (``WebSocketDelegate/webSocket(_:didSendMessageWithTag:)``):
    /// the async face, which has no use for it, saves a delegate call per message. Set before use.
    package var reportsSends = true

    /// Called on the loop when the write queue goes over its high watermark (false) and falls to its low
    /// one (true), before the delegate hears it: the async face's sends wait on it. Set before use.
    package var writabilityChanged: (@Sendable (Bool) -> Void)?

    /// Encodes `message` on the loop and writes its frames under a write tag of their own, or tells the
    /// delegate the send was rejected.
    func send(_ message: WebSocketMessage, timeout: TimeInterval, tag: Int) {
        guard socket.eventLoop.inEventLoop else {
            socket.eventLoop.execute { [self] in send(message, timeout: timeout, tag: tag) }
            return
        }
        if deferredUntilOpen(.send(message, timeout: timeout, tag: tag)) { return }
        do throws(WebSocketProtocolHandler.SendError) {
            // A server's frame with no timeout: header and payload straight into the socket's writes.
            if timeout < 0, let frame = try handler.plainDataFrame(message) {
                return write(frame.opcode, frame.payload, sending: reportsSends ? (pendingSends.begin(), tag) : nil)
            }
            let outputs = try handler.send(message)
            run(outputs, sending: reportsSends || timeout >= 0 ? (pendingSends.begin(), tag, timeout) : nil)
        } catch {
            tellDelegate { $0.webSocket(self, didRejectSendWithTag: tag, error: error) }
        }
    }

    /// Payloads up to this many bytes are copied into the socket's staging buffer with their header
    /// (one `sendmsg(2)` buffer, no allocation per frame); larger ones are written as the `Data` they are.
    static let copiedPayloadLimit = 4096

    /// Writes an unmasked data frame of `opcode` as its header (built on the stack) and `payload`, with no
    /// timeout, under the send's write tag (`sending`), or unreported when there is none. Loop thread only.
    private func write(_ opcode: WebSocketOpcode, _ payload: Data, sending: (writeTag: Int, tag: Int)?) {
        guard payload.count <= Self.copiedPayloadLimit else {
            let writeTag = sending?.writeTag ?? 0
            if let sending { for _ in 0..<2 { pendingSends.queued(writeTag, tag: sending.tag) } }
            WebSocketFrameEncoder.withUnmaskedHeader(opcode: opcode, payloadLength: payload.count) { header in
                socket.write(copying: header, withTimeout: -1, tag: writeTag)
            }
            return socket.write(payload, withTimeout: -1, tag: writeTag)
        }
        if let sending { pendingSends.queued(sending.writeTag, tag: sending.tag) }
        WebSocketFrameEncoder.withUnmaskedHeader(opcode: opcode, payloadLength: payload.count) { header in
            payload.withUnsafeBytes { socket.write(copying: header, $0, tag: sending?.writeTag) }
        }
    }

    /// A TCP write is done: a send's last one is reported with the app's tag.
    private func wrote(_ writeTag: Int) {
        guard let tag = pendingSends.wrote(writeTag) else { return }
        tellDelegate { $0.webSocket(self, didSendMessageWithTag: tag) }
    }

    /// TCP refused a write (the connection is ending): the send is reported as rejected.
    private func rejectedWrite(_ writeTag: Int) {
        guard let tag = pendingSends.rejected(writeTag) else { return }
        tellDelegate { $0.webSocket(self, didRejectSendWithTag: tag, error: .closing) }
    }

    /// TCP ended: the end of an open connection, or a failed opening handshake.
    private func ended(_ error: SocketError?) {
        transportError = pendingSends.appTagged(error)
        pendingSends.removeAll()
        guard let opening else {
            endOpening()
            return perform { $0.transportClosed() }
        }
        self.opening = nil
        let failure = opening.failure ?? .socket(error ?? .connectionClosed)
        tellDelegate { $0.webSocket(self, didFailToConnectWith: failure) }
        endOpening()
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
    func perform(_ step: @escaping @Sendable (inout WebSocketProtocolHandler) -> [WebSocketProtocolHandler.Output]) {
        guard socket.eventLoop.inEventLoop else {
            socket.eventLoop.execute { [self] in perform(step) }
            return
        }
        run(step(&handler))
    }

    /// Does what the handler said; the writes of an app's send (`sending`: its write tag, the app's tag
    /// and its timeout) under its write tag.
    private func run(_ outputs: [WebSocketProtocolHandler.Output], sending: (writeTag: Int, tag: Int, timeout: TimeInterval)? = nil) {
        for output in outputs {
            switch output {
            case .write(let bytes):
                guard let sending else {
                    socket.write(bytes, withTimeout: -1, tag: 0)
                    continue
                }
                pendingSends.queued(sending.writeTag, tag: sending.tag)
                socket.write(bytes, withTimeout: sending.timeout, tag: sending.writeTag)
            case .message(let message):
                // On the loop: called inline, with no closure to allocate per message.
                guard delegateQueue != nil else {
                    delegate?.webSocket(self, didReceive: message)
                    continue
                }
                tellDelegate { $0.webSocket(self, didReceive: message) }
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
            case .closed(var result):
                if result.code == .abnormalClosure && !result.wasClean, let transportError {
                    result = WebSocketCloseResult(code: result.code, reason: result.reason, wasClean: false, error: transportError)
                }
                closeTimer?.cancel()
                keepAliveTimer?.cancel()
                closeTimer = nil
                keepAliveTimer = nil
                tellDelegate { [result] in $0.webSocket(self, didCloseWith: result) }
            }
        }
    }

    /// Calls the delegate on ``delegateQueue``, or at once when it is `nil` (the caller is on the loop).
    func tellDelegate(_ call: @escaping @Sendable (any WebSocketDelegate) -> Void) {
        guard let delegateQueue else {
            socket.eventLoop.assertInEventLoop()
            if let delegate { call(delegate) }
            return
        }
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
    var didWrite: (Int) -> Void = { _ in }
    var didRejectWrite: (Int) -> Void = { _ in }
    var didExceedHighWatermark: (Int) -> Void = { _ in }
    var didFallToLowWatermark: (Int) -> Void = { _ in }

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) { didConnect() }
    func socketDidSecure(_ sock: TCPSocket) { didSecure() }
    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) { didDisconnect(err) }
    func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) { didWrite(tag) }
    func socket(_ sock: TCPSocket, didRejectWriteWithTag tag: Int, error: SocketError) { didRejectWrite(tag) }
    func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) { didExceedHighWatermark(queuedBytes) }
    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) { didFallToLowWatermark(queuedBytes) }
}
