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
    // Stored properties are laid out in declaration order: the one-byte ones sit together (below), so
    // an idle connection's object pads no word for each of them.

    /// The TCP connection underneath.
    public let socket: TCPSocket
    /// Where ``delegate`` is called: a serial queue, or `nil` for the socket's event loop thread
    /// (`TCPSocket`'s convention). On the loop, calls come inline as frames are decoded, and what the
    /// delegate sends from within them goes out in the same `sendmsg(2)` as the rest of that read's
    /// answers, with no thread hop; such a delegate must not block.
    public let delegateQueue: DispatchQueue?
    /// The delegate (weak): the one lock of a connection.
    private let delegateStorage = LockedValue(WeakDelegate())
    /// The socket's delegate and this connection's keep-alive entry (holds this WebSocket weakly).
    let callbacks = WebSocketSocketCallbacks()
    /// A client's settings until ``connect(to:)`` (set once, by the client initializer).
    var pendingConfiguration: ClientConfiguration {
        get { client?.configuration ?? ClientConfiguration() }
        set { client?.configuration = newValue }
    }
    /// Loop-confined (so unchecked for exclusivity: no runtime access record per use): the protocol, and
    /// the close timer (the keep-alive timer is the loop's: ``WebSocketKeepAliveTimers``).
    @exclusivity(unchecked) private var handler: WebSocketProtocolHandler
    private var closeTimer: Scheduled?
    /// The extensions agreed in the opening handshake (``extensions``): a server's, given when it is
    /// made; a client's, once its handshake is done.
    var agreedExtensions: [WebSocketExtension] {
        switch ends {
        case .server(let extensions): return extensions
        case .client(let client): return client.extensions.withLock { $0 }
        }
    }
    /// A client's opening handshake until it is done (nil once open, and on a server's socket).
    var opening: Opening? {
        get { client?.opening }
        set { client?.opening = newValue }
    }
    /// What only one role holds, in one word: a server's agreed extensions, or a client's boxed state
    /// (inline, a client's settings and opening handshake were 861 of the 1,136 bytes of every accepted
    /// connection's WebSocket: docs/BENCHMARKS.md, "WebSocket"). Set once, by the initializer.
    private let ends: RoleState

    private enum RoleState {
        case server(extensions: [WebSocketExtension])
        case client(ClientState)
    }

    /// A client's own state; nil on a server's socket.
    var client: ClientState? {
        if case .client(let client) = ends { return client }
        return nil
    }

    /// A client's own state (loop-confined once connecting, as ``opening`` was).
    final class ClientState {
        var configuration = ClientConfiguration()
        var opening: Opening?
        /// Set on the loop when the handshake is done, read from any thread.
        let extensions = LockedValue<[WebSocketExtension]>([])
        /// The server's 101 has been checked: frames may go out. Before it, none may (RFC 6455 §4.1).
        var isOpen = false
        /// The opening handshake failed, or the app closed before it was done: nothing will go out.
        var hasEnded = false
        /// What the app asked for before it was open, in order: done once open (``WebSocket/openedRunDeferred()``).
        var deferred: [DeferredRequest] = []
    }

    /// The app's sends not yet written (loop-confined).
    @exclusivity(unchecked) private var pendingSends = WebSocketPendingSends()
    /// Which end this is.
    public let role: WebSocketRole
    /// Whether a frame read is queued, and whether reading has started.
    private var reading = false
    private var started = false
    /// Pongs queued on the socket and not yet with the kernel: fewer than twice ``maxUnsentPongs``.
    package private(set) var unsentPongs: UInt8 = 0
    /// Whether sends with no timeout are reported (``WebSocketDelegate/webSocket(_:didSendMessageWithTag:)``):
    /// the async face, which has no use for it, saves a delegate call per message. Set before use.
    @exclusivity(unchecked) package var reportsSends = true

    /// The app's delegate (held weakly). Set it before the socket starts reading (in
    /// ``WebSocketListenerDelegate/listener(_:didAccept:request:)`` for an accepted one). With
    /// `delegateQueue` `nil` it is looked up once for each read's run of messages: one set from inside a
    /// callback is called from the next read on (the frames of one `read(2)` go to one delegate).
    public var delegate: (any WebSocketDelegate)? {
        get { delegateStorage.withLock { $0.delegate } }
        set { delegateStorage.withLock { $0.delegate = newValue } }
    }

    private struct WeakDelegate {
        weak var delegate: (any WebSocketDelegate)?
    }

    /// Who a read's messages go to on the loop, looked up once per read.
    private enum Receiver {
        case none
        case plain(any WebSocketDelegate)
        case borrowing(any WebSocketBorrowingDelegate)
    }

    /// The delegate to hand this read's messages to on the loop (`delegateQueue` `nil`). Whether it reads
    /// borrowed messages is asked here, once per read, rather than kept beside it: a second weak reference
    /// in the delegate's box would cost every idle connection 16 bytes.
    private func loopReceiver() -> Receiver {
        guard let delegate = delegateStorage.withLock({ $0.delegate }) else { return .none }
        if let borrowing = delegate as? any WebSocketBorrowingDelegate { return .borrowing(borrowing) }
        return .plain(delegate)
    }

    /// A WebSocket over `socket`, whose upgrade is done (bytes after the upgrade's head are the first
    /// frames), for `role`, with `handler`'s limits and timers. It starts reading at once unless
    /// `startsReading` is false (then ``startReading()`` does).
    package convenience init(
        upgraded socket: TCPSocket, role: WebSocketRole, handler: WebSocketProtocolHandler,
        delegate: (any WebSocketDelegate)?, delegateQueue: DispatchQueue?, startsReading: Bool = true
    ) {
        self.init(
            upgraded: socket, role: role, handler: handler, delegate: delegate, delegateQueue: delegateQueue,
            startsReading: startsReading, extensions: [])
    }

    /// As ``init(upgraded:role:handler:delegate:delegateQueue:startsReading:)``, for a server that agreed
    /// to `extensions` in its upgrade (``extensions``).
    package init(
        upgraded socket: TCPSocket, role: WebSocketRole, handler: WebSocketProtocolHandler,
        delegate: (any WebSocketDelegate)?, delegateQueue: DispatchQueue?, startsReading: Bool,
        extensions: [WebSocketExtension]
    ) {
        self.socket = socket
        self.role = role
        self.handler = handler
        ends = role == .client ? .client(ClientState()) : .server(extensions: extensions)
        self.delegateQueue = delegateQueue
        self.delegate = delegate
        callbacks.owner = self
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
    ///   - text: the message; sent as one frame of its UTF-8 bytes, or when they are more than the frame
    ///     limit (16 MiB by default) as fragments of that size (RFC 6455 §5.4).
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

    /// Sends a copy of `bytes` as one message, binary (`opcode` `.binary`, the default) or text (`.text`:
    /// UTF-8; invalid sequences are replaced by U+FFFD, as `String(decoding:as:)` does, before sending),
    /// as ``send(data:withTimeout:tag:)`` and ``send(text:withTimeout:tag:)`` do: for bytes borrowed only
    /// for the call, such as a message from ``WebSocketBorrowingDelegate/webSocket(_:didReceive:opcode:)``.
    /// On the event loop thread a server's message with no timeout, within the frame limit, is copied,
    /// after its frame header,
    /// straight into the socket's write staging (no allocation per message once it has grown); otherwise
    /// it is copied into a `Data` or `String` first. Any thread.
    ///
    /// - Precondition: `opcode` is `.text` or `.binary` (a programmer error).
    public func send(
        copying bytes: UnsafeRawBufferPointer, opcode: WebSocketOpcode = .binary, withTimeout timeout: TimeInterval = -1,
        tag: Int = 0
    ) {
        precondition(opcode == .binary || opcode == .text, "a message is text or binary, not \(opcode)")
        guard timeout < 0, socket.eventLoop.inEventLoop, opcode == .binary || Self.isWholeUTF8(bytes) else {
            return send(Self.message(opcode, bytes), timeout: timeout, tag: tag)
        }
        do throws(WebSocketProtocolHandler.SendError) {
            guard try handler.sendsPlainDataFrame(ofLength: bytes.count) else {
                return send(Self.message(opcode, bytes), timeout: timeout, tag: tag)
            }
            writeCopying(opcode, bytes, sending: reportsSends ? (pendingSends.begin(), tag) : nil)
        } catch {
            tellDelegate { $0.webSocket(self, didRejectSendWithTag: tag, error: error) }
        }
    }

    /// Sends a Ping with `payload` (at most 125 bytes; longer ones are not sent). A client's goes out
    /// once it is open.
    public func sendPing(_ payload: Data = Data()) { performOnceOpen { (try? $0.sendPing(payload)) ?? [] } }

    /// Sends an unsolicited Pong with `payload` (at most 125 bytes; longer ones are not sent): a one-way
    /// heartbeat the peer does not answer (RFC 6455 §5.5.3). Pings from the peer are answered on their own.
    /// Not sent while 64 Pongs already wait in the socket's queue (a peer that reads nothing): see
    /// ``WebSocketProtocolHandler``.
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

    /// Called on the loop when the write queue goes over its high watermark (false) and falls to its low
    /// one (true), before the delegate hears it: the async face's sends wait on it. Set before use.
    package var writabilityChanged: (@Sendable (Bool) -> Void)? {
        get { hooks?.writabilityChanged }
        set { asyncHooks().writabilityChanged = newValue }
    }

    /// The async face's two hooks, boxed: nil (one word) on a connection of the delegate API.
    private var hooks: AsyncHooks?

    private final class AsyncHooks {
        var writabilityChanged: (@Sendable (Bool) -> Void)?
        var readGate: @Sendable () -> Bool = { false }
    }

    private func asyncHooks() -> AsyncHooks {
        if let hooks { return hooks }
        let made = AsyncHooks()
        hooks = made
        return made
    }

    /// What ``readGate`` says now: false without one.
    private var readIsPaused: Bool { hooks?.readGate() ?? false }

    /// Encodes `message` on the loop and writes its frames under a write tag of their own, or tells the
    /// delegate the send was rejected.
    func send(_ message: WebSocketMessage, timeout: TimeInterval, tag: Int) {
        guard socket.eventLoop.inEventLoop else {
            socket.eventLoop.execute { [self] in send(message, timeout: timeout, tag: tag) }
            return
        }
        if deferredUntilOpen(.send(message, timeout: timeout, tag: tag)) { return }
        if let error = sendNow(message, timeout: timeout, tag: tag) {
            tellDelegate { $0.webSocket(self, didRejectSendWithTag: tag, error: error) }
        }
    }

    /// Encodes `message` (text, binary, or a control message: a Ping, a Pong, a Close that starts the
    /// closing handshake) and writes its frames, on the loop, with no timeout and unreported: the async
    /// face's send. Returns why it was refused (``WebSocketProtocolHandler/SendError/closing`` once
    /// closing has begun, `.pingTooLong` for a control payload over 125 bytes), nil once it is queued
    /// (or, on a client not open yet, kept for the opening). The check and the write are one step on the
    /// loop, so a Close that arrives meanwhile cannot leave a message unsent and unreported. Loop thread.
    package func sendNow(_ message: WebSocketMessage) -> WebSocketProtocolHandler.SendError? {
        socket.eventLoop.assertInEventLoop()
        if deferredUntilOpen(.send(message, timeout: -1, tag: 0)) { return nil }
        return sendNow(message, timeout: -1, tag: 0)
    }

    /// Writes `message`'s frames (under a write tag of their own when the send is reported or has a
    /// timeout), or returns why the handler refused it. Loop thread; the connection is open.
    private func sendNow(_ message: WebSocketMessage, timeout: TimeInterval, tag: Int) -> WebSocketProtocolHandler.SendError? {
        do throws(WebSocketProtocolHandler.SendError) {
            // A server's frame with no timeout: header and payload straight into the socket's writes.
            if timeout < 0, let frame = try handler.plainDataFrame(message) {
                write(frame.opcode, frame.payload, sending: reportsSends ? (pendingSends.begin(), tag) : nil)
                return nil
            }
            let outputs = try handler.send(message)
            run(outputs, sending: reportsSends || timeout >= 0 ? (pendingSends.begin(), tag, timeout) : nil)
            return nil
        } catch {
            return error
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
        payload.withUnsafeBytes { writeCopying(opcode, $0, sending: sending) }
    }

    /// Writes an unmasked data frame of `opcode` as its header and a copy of `payload`, both staged in the
    /// socket's write buffer, with no timeout, under the send's write tag (`sending`), or unreported when
    /// there is none. Loop thread only.
    private func writeCopying(_ opcode: WebSocketOpcode, _ payload: UnsafeRawBufferPointer, sending: (writeTag: Int, tag: Int)?) {
        if let sending { pendingSends.queued(sending.writeTag, tag: sending.tag) }
        guard payload.count > 125 else {
            // The usual small frame: FIN and opcode, then the 7-bit length (RFC 6455 §5.2), built here.
            let header = (0x80 | opcode.rawValue, UInt8(payload.count))
            return withUnsafeBytes(of: header) { socket.write(copying: $0, payload, tag: sending?.writeTag) }
        }
        WebSocketFrameEncoder.withUnmaskedHeader(opcode: opcode, payloadLength: payload.count) { header in
            socket.write(copying: header, payload, tag: sending?.writeTag)
        }
    }

    /// The write queue went over its high watermark (`writable` false) or fell to its low one (true).
    func watermarkCrossed(writable: Bool, queuedBytes: Int) {
        writabilityChanged?(writable)
        if writable {
            tellDelegate { $0.webSocket(self, writeQueueDidFallToLowWatermark: queuedBytes) }
        } else {
            tellDelegate { $0.webSocket(self, writeQueueDidExceedHighWatermark: queuedBytes) }
        }
    }

    /// A TCP write is done: a send's last one is reported with the app's tag.
    func wrote(_ writeTag: Int) {
        if writeTag == Self.pongWriteTag {
            unsentPongs -= 1
            return
        }
        guard let tag = pendingSends.wrote(writeTag) else { return }
        tellDelegate { $0.webSocket(self, didSendMessageWithTag: tag) }
    }

    /// TCP refused a write (the connection is ending): the send is reported as rejected.
    func rejectedWrite(_ writeTag: Int) {
        guard let tag = pendingSends.rejected(writeTag) else { return }
        tellDelegate { $0.webSocket(self, didRejectSendWithTag: tag, error: .closing) }
    }

    /// TCP ended: the end of an open connection, or a failed opening handshake.
    func ended(_ error: SocketError?) {
        let transportError = pendingSends.appTagged(error)
        pendingSends.removeAll()
        guard let opening else {
            endOpening()
            return run(handler.transportClosed(), transportError: transportError)
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
        if !readIsPaused { readFrames() }
    }

    /// Queues the consuming read that decodes frames until the connection ends or reading is paused.
    /// Its two closures capture only the callbacks object (which holds this WebSocket weakly): a closure
    /// whose one capture is an object needs no context of its own, so the read allocates nothing.
    private func readFrames() {
        reading = true
        socket.read(
            .consuming(
                { [callbacks] bytes in callbacks.owner?.consume(bytes) ?? .complete(consumed: 0) }, maxLength: handler.maximumFrameLength),
            timeout: -1, tag: 0
        ) { [callbacks] result in callbacks.owner?.readEnded(result) }
    }

    /// The consuming read ended (the connection closed, or the gate paused it).
    private func readEnded(_ result: Result<Data, SocketError>) {
        reading = false
        // Ended by the gate: a resume that came first found this read still queued, so look again.
        if case .success = result, !handler.isClosed, !readIsPaused { readFrames() }
    }

    /// Asked on the loop after each read's frames: true stops taking frames from the socket (TCP's
    /// window then holds the peer back) until ``resumeReading()``. The async face's backpressure; set
    /// before reading starts.
    package var readGate: @Sendable () -> Bool {
        get {
            guard let hooks else { return { false } }
            return hooks.readGate
        }
        set { asyncHooks().readGate = newValue }
    }

    /// Takes frames again, unless ``readGate`` still says to wait. Any thread: the gate is asked on the
    /// loop, so a late call cannot undo a newer decision.
    package func resumeReading() {
        socket.eventLoop.execute { [self] in
            if !reading && !handler.isClosed && opening == nil && started && !readIsPaused { readFrames() }
        }
    }

    /// Decodes what arrived, frame by frame, each handed on before the next is decoded; reading goes on
    /// until the connection is closed. A whole one-frame text or binary message is taken in place: its
    /// payload unmasked into a scratch buffer of this read and handed on borrowed (to a
    /// ``WebSocketBorrowingDelegate`` on the loop) or as a ``WebSocketMessage``, with no `WebSocketFrame`;
    /// anything else goes through the handler's ``WebSocketProtocolHandler/receive(_:)``.
    private func consume(_ bytes: UnsafeRawBufferPointer) -> ByteConsumption {
        let receiver = delegateQueue == nil ? loopReceiver() : .none
        var scratch = UnmaskScratch()
        defer { scratch.deallocate() }
        var pongs: [Data] = []  // this read's Pongs not yet written: see writePongs(_:)
        defer { writePongs(&pongs) }
        var consumed = 0
        while !handler.isClosed && consumed < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[consumed...])
            if let header = handler.wholeMessageFrame(in: rest) {
                let payload = scratch.unmasked(header, in: rest)
                if header.opcode == .binary || Self.isWholeUTF8(payload) {
                    handler.tookWholeMessageFrame()
                    consumed += header.headerLength + header.payloadLength
                    writePongs(&pongs)
                    switch receiver {
                    case .borrowing(let delegate): delegate.webSocket(self, didReceive: payload, opcode: header.opcode)
                    case .plain, .none: deliver(Self.message(header.opcode, payload), to: receiver)
                    }
                    continue
                }
                // Text that is not UTF-8: the handler fails the connection with 1007.
            }
            var outputs: [WebSocketProtocolHandler.Output] = []
            let taken = FrameBuffer.borrowing(rest) { buffer in outputs = handler.receive(&buffer, maxFrames: 1) }.consumed
            consumed += taken
            run(outputs, receiver: receiver, pongs: &pongs)
            if taken == 0 { break }
        }
        return handler.isClosed || readIsPaused ? .complete(consumed: consumed) : .needMoreData(consumed: consumed)
    }

    /// Whether `bytes` are whole, well-formed UTF-8 (RFC 6455 §8.1).
    private static func isWholeUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) == nil && validator.isAtCharacterBoundary
    }

    /// A text (valid UTF-8) or binary message of `payload`'s bytes.
    private static func message(_ opcode: WebSocketOpcode, _ payload: UnsafeRawBufferPointer) -> WebSocketMessage {
        opcode == .text ? .text(String(decoding: payload, as: UTF8.self)) : .binary(Data(payload))
    }

    /// Hands `message` (text or binary) to the delegate: inline to `receiver` on the loop, or on the
    /// delegate queue.
    private func deliver(_ message: WebSocketMessage, to receiver: Receiver) {
        guard delegateQueue == nil else { return tellDelegate { $0.webSocket(self, didReceive: message) } }
        switch receiver {
        case .none: return
        case .plain(let delegate): delegate.webSocket(self, didReceive: message)
        case .borrowing(let delegate):
            switch message {
            case .binary(let data): data.withUnsafeBytes { delegate.webSocket(self, didReceive: $0, opcode: .binary) }
            case .text(var text): text.withUTF8 { delegate.webSocket(self, didReceive: UnsafeRawBufferPointer($0), opcode: .text) }
            case .ping, .pong, .close: delegate.webSocket(self, didReceive: message)
            }
        }
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
    /// and its timeout) under its write tag. `transportError`: the error TCP ended with, for a 1006 result
    /// (given when TCP's end is what is being run, not kept: one fewer field in every connection).
    private func run(
        _ outputs: [WebSocketProtocolHandler.Output], sending: (writeTag: Int, tag: Int, timeout: TimeInterval)? = nil,
        transportError: SocketError? = nil
    ) {
        var pongs: [Data] = []
        run(outputs, sending: sending, transportError: transportError, pongs: &pongs)
        writePongs(&pongs)
    }

    /// ``run(_:sending:transportError:)`` for outputs whose Pongs join `pongs` (a read's, written by
    /// ``writePongs(_:)`` before anything else that follows them and at the end of the read).
    private func run(
        _ outputs: [WebSocketProtocolHandler.Output], sending: (writeTag: Int, tag: Int, timeout: TimeInterval)? = nil,
        transportError: SocketError? = nil, receiver: Receiver? = nil, pongs: inout [Data]
    ) {
        for output in outputs {
            if case .write(let bytes) = output, sending == nil, bytes.first == Self.pongFirstByte {
                pongs.append(bytes)
                continue
            }
            writePongs(&pongs)
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
                deliver(message, to: receiver ?? (delegateQueue == nil ? loopReceiver() : .none))
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
                WebSocketKeepAliveTimers.on(socket.eventLoop).start(callbacks, after: delay)
            case .closed(var result):
                if result.code == .abnormalClosure && !result.wasClean, let transportError {
                    result = WebSocketCloseResult(code: result.code, reason: result.reason, wasClean: false, error: transportError)
                }
                closeTimer?.cancel()
                closeTimer = nil
                WebSocketKeepAliveTimers.on(socket.eventLoop).stop(callbacks)
                tellDelegate { [result] in $0.webSocket(self, didCloseWith: result) }
            }
        }
    }

    /// How many Pongs may wait on the socket: 64 (8 KiB with their headers). A peer that sends Pings and
    /// reads nothing would otherwise make this side queue a Pong for each, without bound (its memory is
    /// the kernel's buffers, then ours). RFC 6455 §5.5.3 lets an endpoint that has not yet sent the
    /// Pongs of earlier Pings answer only the most recent: so while 64 Pongs of earlier reads wait, the
    /// Pings of a read go unanswered, and of one read's Pings only the last 64 are. The queue holds
    /// fewer than 128 Pongs; a peer's keep-alive never has 64 unanswered.
    package static let maxUnsentPongs: UInt8 = 64

    /// Writes `pongs` (Pong frames in a row: one read's answers, or one call's) and empties it: none while
    /// ``maxUnsentPongs`` wait, else the last 64 (the most recent Pings', §5.5.3). Called before whatever
    /// follows them (another frame, a message handed to the app, the end), so the order is kept.
    private func writePongs(_ pongs: inout [Data]) {
        guard !pongs.isEmpty else { return }
        if unsentPongs < Self.maxUnsentPongs {
            for bytes in pongs.suffix(Int(Self.maxUnsentPongs)) { writePong(bytes) }
        }
        pongs.removeAll(keepingCapacity: true)
    }

    /// The first byte of every Pong frame: FIN, no reserved bits, opcode 0xA (RFC 6455 §5.2).
    private static let pongFirstByte: UInt8 = 0x8A

    /// The write tag of Pongs, apart from the app's sends (1, 2, 3, …) and the connection's other
    /// writes (0): their completions count ``unsentPongs`` down.
    private static let pongWriteTag = -1

    /// Queues a Pong frame (`bytes`: an answer to a Ping, or the app's unsolicited one). Loop thread.
    private func writePong(_ bytes: Data) {
        unsentPongs += 1
        socket.write(bytes, withTimeout: -1, tag: Self.pongWriteTag)
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
