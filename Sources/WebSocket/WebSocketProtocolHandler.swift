import Foundation
import SocketFraming

/// One WebSocket connection's protocol after the upgrade (RFC 6455 §5–§7), as a value: bytes from the
/// peer in, and out what to write, what to hand the app, which timers to run and how the connection
/// ended. It joins SocketFraming's frame decoder, encoder and message assembler with the closing
/// handshake (``WebSocketCloseHandshake``) and keep-alive pings (``WebSocketKeepAlive``); the
/// connection that owns it does the I/O and the timers, so every rule here is tested with no socket.
///
/// - Pings are answered with a Pong of the same payload until the peer's Close has arrived (§5.5.2).
///   (``WebSocket/WebSocket``, which writes them, answers only the last 64 Pings of a read, and none
///   while 64 Pongs of earlier reads are not yet with the kernel, §5.5.3: a peer that sends Pings and
///   reads nothing cannot make it queue without bound.)
/// - Data frames reach the app until the peer's Close (§5.5.1); nothing can be sent after this side's.
/// - A frame or message that breaks a rule fails the connection with the error's close code (1002,
///   1007, 1009; §7.1.7) and nothing after it is read.
/// - Text is checked as UTF-8 as it arrives (§8.1, fail fast): an invalid byte fails the connection
///   with 1007 as soon as it has been received, even inside a frame whose rest has not (the bytes of
///   such a frame that have arrived are unmasked and checked without being consumed). A compressed
///   message (permessage-deflate) is checked frame by frame, as each frame is inflated.
/// - With permessage-deflate agreed (``enablePerMessageDeflate(_:)``, RFC 7692) text and binary
///   messages go out compressed (RSV1 on their first frame, §6) and compressed ones coming in are
///   inflated no further than the message limit (1009); control frames are never compressed.
/// - Keep-alive pings stop once closing has begun: the close timeout then bounds the wait.
/// - When ``Output/closed(_:)`` comes out, the owner stops every timer.
public struct WebSocketProtocolHandler: Sendable {
    /// What to do, in order.
    public enum Output: Sendable, Equatable {
        /// Bytes for the peer (whole frames), after those written before.
        case write(Data)
        /// A text or binary message for the app.
        case message(WebSocketMessage)
        /// A Pong arrived with this payload (for the app's callback).
        case pong(Data)
        /// Close TCP: after what is queued has been written, or at once.
        case closeTransport(afterWriting: Bool)
        /// Start (or restart) the close timer; call ``closeTimerFired()`` when it fires.
        case startCloseTimer(Duration)
        /// Stop the close timer.
        case cancelCloseTimer
        /// Start (or restart) the keep-alive timer; call ``keepAliveTimerFired()`` when it fires.
        case startKeepAliveTimer(Duration)
        /// The connection is over; the owner stops every timer.
        case closed(WebSocketCloseResult)
    }

    /// Why a send was refused.
    public enum SendError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Closing has begun (this side's Close was sent or the peer's received): no more messages (§5.5.1).
        case closing
        /// A ping's (or a pong's) payload over 125 bytes (§5.5).
        case pingTooLong(Int)

        public var description: String {
            switch self {
            case .closing: return "the WebSocket is closing: no more messages"
            case .pingTooLong(let count): return "a ping's payload is at most 125 bytes, not \(count)"
            }
        }
    }

    private var decoder: WebSocketFrameDecoder
    private var assembler: WebSocketMessageAssembler
    private let encoder: WebSocketFrameEncoder
    /// permessage-deflate, once agreed.
    private var deflate: WebSocketDeflateCodec?
    /// How far the text frame at the front of the buffer, not all arrived yet, has been checked as UTF-8.
    private var partialText = WebSocketPartialTextCheck()
    /// The closing handshake.
    public private(set) var handshake: WebSocketCloseHandshake
    /// Keep-alive pings; nil when off.
    public private(set) var keepAlive: WebSocketKeepAlive?

    /// The protocol of an open connection for `role`, with SocketFraming's limits (16 MiB a frame,
    /// 64 MiB a message by default), the close timeout, and keep-alive (nil: none).
    public init(
        role: WebSocketRole, maxFrameSize: Int = WebSocketFrameDecoder.defaultMaxFrameSize,
        maxMessageSize: Int = WebSocketMessageAssembler.defaultMaxMessageSize,
        closeTimeout: Duration = WebSocketCloseHandshake.defaultTimeout, keepAlive: WebSocketKeepAlive? = WebSocketKeepAlive()
    ) {
        decoder = WebSocketFrameDecoder(role: role, maxFrameSize: maxFrameSize)
        assembler = WebSocketMessageAssembler(maxMessageSize: maxMessageSize)
        encoder = WebSocketFrameEncoder(role: role)
        handshake = WebSocketCloseHandshake(role: role == .server ? .server : .client, timeout: closeTimeout)
        self.keepAlive = keepAlive
    }

    /// Turns on permessage-deflate as agreed in the opening handshake (RFC 7692 §7.1; the server's
    /// `PerMessageDeflate.ServerConfiguration.negotiate(_:)`, the client's
    /// `PerMessageDeflate.ClientConfiguration.accept(_:)`): RSV1 is accepted from then on, outgoing data
    /// messages are compressed, incoming compressed ones inflated. Call it before the first frame.
    ///
    /// The zlib state it makes is shared by copies of the handler made afterwards: one connection, one
    /// handler (a template handler, such as ``WebSocketListener/Configuration/connection``, stays without).
    public mutating func enablePerMessageDeflate(_ agreement: PerMessageDeflate.Agreement) {
        decoder = WebSocketFrameDecoder(role: decoder.role, maxFrameSize: decoder.maxFrameSize, allowedReservedBits: .rsv1)
        deflate = WebSocketDeflateCodec(agreement: agreement, role: decoder.role)
    }

    /// What permessage-deflate agreed, or nil when it is not in use.
    public var perMessageDeflate: PerMessageDeflate.Agreement? { deflate?.agreement }

    /// Whether permessage-deflate's compressor and decompressor hold zlib state now (for memory tests):
    /// only with context takeover. Both false without permessage-deflate.
    package var deflateHoldsContext: (compressor: Bool, decompressor: Bool) { deflate?.holdsContext ?? (false, false) }

    /// The connection opened: the keep-alive timer starts.
    public func start() -> [Output] {
        keepAlive?.start().compactMap(Self.timer) ?? []
    }

    /// Decodes every whole frame in `buffer` (consuming exactly their bytes) and handles it. After a
    /// failure or the end, nothing more is read.
    public mutating func receive(_ buffer: inout FrameBuffer) -> [Output] { receive(&buffer, maxFrames: .max) }

    /// ``receive(_:)`` of at most `maxFrames` whole frames: the rest stays in `buffer`.
    package mutating func receive(_ buffer: inout FrameBuffer, maxFrames: Int) -> [Output] {
        var outputs: [Output] = []
        var frames = 0
        while !isClosed && frames < maxFrames {
            do throws(WebSocketProtocolError) {
                guard var frame = try decoder.decode(&buffer) else {
                    try partialText.check(buffer, decoder: decoder, assembler: assembler, deflate: deflate)
                    break
                }
                frames += 1
                // The bytes of this frame checked as UTF-8 before it had all arrived are not checked again.
                let checkedText = partialText.checkedText
                partialText = WebSocketPartialTextCheck()
                if let deflate { frame = try deflate.inflate(frame, maxMessageSize: assembler.maxMessageSize) }
                if let message = try assembler.append(frame, checkedText: checkedText) { handle(message, into: &outputs) }
            } catch {
                outputs += handshake.fail(code: error.closeCode, reason: Self.reason(error)).flatMap(output)
            }
        }
        return outputs
    }

    /// The header of the frame at the front of `bytes` when it is all there and is a whole text or binary
    /// message that ``receive(_:)`` would hand to the app as it is: FIN set, no fragmented message open,
    /// no permessage-deflate, within the message limit, while messages are delivered (until the peer's
    /// Close). Nil for anything else, which ``receive(_:)`` then handles (a refused header, a control
    /// frame, a fragment, a frame not all arrived). Text is not checked here: the caller checks the
    /// unmasked payload as UTF-8 and, when it is valid, takes the frame (``tookWholeMessageFrame()``);
    /// when it is not, ``receive(_:)`` fails the connection with 1007 as for any frame. Changes nothing
    /// (`mutating` only so that a handler stored in a class is not copied for the call, as
    /// ``plainDataFrame(_:)``).
    package mutating func wholeMessageFrame(in bytes: UnsafeRawBufferPointer) -> WebSocketFrameHeader? {
        guard deflate == nil, !assembler.isAssemblingMessage, handshake.deliversMessages,
            let header = decoder.wholeFrameHeader(in: bytes), header.fin,
            header.opcode == .binary || header.opcode == .text, header.payloadLength <= assembler.maxMessageSize
        else { return nil }
        return header
    }

    /// The frame ``wholeMessageFrame(in:)`` found was taken (its bytes consumed, its message handed on):
    /// what was checked of it as UTF-8 before it had all arrived is forgotten, as ``receive(_:)`` does.
    package mutating func tookWholeMessageFrame() {
        partialText = WebSocketPartialTextCheck()
    }

    /// True once the connection has ended (``Output/closed(_:)`` came out).
    public var isClosed: Bool {
        if case .closed = handshake.state { return true }
        return false
    }

    /// The most bytes one frame may occupy on the wire (a consuming read's limit).
    public var maximumFrameLength: Int { decoder.maximumFrameLength }

    /// Appends what `message` calls for to `outputs` (no array of its own per message).
    private mutating func handle(_ message: WebSocketMessage, into outputs: inout [Output]) {
        switch message {
        case .text, .binary:
            if handshake.deliversMessages { outputs.append(.message(message)) }
        case .ping(let payload):
            if handshake.deliversMessages { outputs += frame(.pong, payload) }
        case .pong(let payload):
            outputs.append(.pong(payload))
            outputs += keepAlive?.receivedPong(payload).compactMap(Self.timer) ?? []
        case .close(let payload):
            outputs += handshake.receivedClose(code: payload.code, reason: payload.reason).flatMap(output)
        }
    }

    /// Sends a text or binary `message`: one frame, or fragments of at most `maxFrameSize` payload bytes
    /// when it is longer.
    /// - Throws: ``SendError/closing`` once closing has begun.
    public mutating func send(_ message: WebSocketMessage) throws(SendError) -> [Output] {
        guard handshake.canSend else { throw .closing }
        switch message {
        case .text(let text): return dataFrame(.text, Data(text.utf8))
        case .binary(let data): return dataFrame(.binary, data)
        case .ping(let payload): return try sendPing(payload)
        case .pong(let payload):
            guard payload.count <= 125 else { throw .pingTooLong(payload.count) }
            return frame(.pong, payload)
        case .close(let payload): return close(code: payload.code, reason: payload.reason)
        }
    }

    /// A text or binary `message` a server without permessage-deflate may write as it is: the frame's
    /// opcode and payload (the header from `WebSocketFrameEncoder.withUnmaskedHeader`), after the check
    /// ``send(_:)`` makes; nil when the message needs ``send(_:)`` (a client masks, deflate compresses,
    /// control frames, a message longer than `maxFrameSize` is fragmented). Changes nothing: sending a
    /// data frame moves no state. `mutating` only so that a handler stored in a class is not copied for
    /// the call (a copy retained and released each of its references once per message sent).
    /// - Throws: ``SendError/closing`` once closing has begun.
    package mutating func plainDataFrame(_ message: WebSocketMessage) throws(SendError) -> (opcode: WebSocketOpcode, payload: Data)? {
        switch message {
        case .text(let text): return try sendsPlainDataFrame(ofLength: text.utf8.count) ? (.text, Data(text.utf8)) : nil
        case .binary(let data): return try sendsPlainDataFrame(ofLength: data.count) ? (.binary, data) : nil
        case .ping, .pong, .close: return nil
        }
    }

    /// Whether a data message of `count` payload bytes may be written now as one plain frame (header and
    /// payload as they are): true for a server without permessage-deflate, false when it needs
    /// ``send(_:)`` (a client masks, deflate compresses, a message over `maxFrameSize` is fragmented).
    /// Changes nothing (`mutating` as ``plainDataFrame(_:)``).
    /// - Throws: ``SendError/closing`` once closing has begun.
    package mutating func sendsPlainDataFrame(ofLength count: Int) throws(SendError) -> Bool {
        guard decoder.role == .server, deflate == nil, count <= decoder.maxFrameSize else { return false }
        guard handshake.canSend else { throw .closing }
        return true
    }

    /// Sends a Ping with `payload` (at most 125 bytes).
    public mutating func sendPing(_ payload: Data) throws(SendError) -> [Output] {
        guard handshake.canSend else { throw .closing }
        guard payload.count <= 125 else { throw .pingTooLong(payload.count) }
        return frame(.ping, payload)
    }

    /// Starts the closing handshake with `code` (nil: a Close with no body) and `reason`, cut to the
    /// whole characters that fit in 123 bytes of UTF-8 (a Close frame's room, RFC 6455 §5.5). A code no
    /// endpoint may send (1005, 1006, 1015, or outside 1000–4999: §7.4) gives a Close with no body.
    public mutating func close(code: WebSocketCloseCode?, reason: String = "") -> [Output] {
        handshake.close(code: code, reason: Self.fitting(reason)).flatMap(output)
    }

    /// The close timer fired.
    public mutating func closeTimerFired() -> [Output] { handshake.timeoutFired().flatMap(output) }

    /// The keep-alive timer fired: a Ping, or (no Pong in time) the connection fails with 1011. Nothing
    /// once closing has begun (this side's Close sent or the peer's received): no frame of ours follows
    /// our Close (§1.4, §5.5.1), and the close timer ends a closing handshake that stalls; the timer is
    /// not started again.
    public mutating func keepAliveTimerFired() -> [Output] {
        guard handshake.canSend, var keepAlive else { return [] }
        var outputs: [Output] = []
        for action in keepAlive.timerFired() {
            switch action {
            case .sendPing(let payload): outputs += frame(.ping, payload)
            case .startTimer(let delay): outputs.append(.startKeepAliveTimer(delay))
            case .timedOut: outputs += handshake.fail(code: .internalError, reason: "keepalive ping timeout").flatMap(output)
            }
        }
        self.keepAlive = keepAlive
        return outputs
    }

    /// TCP ended.
    public mutating func transportClosed() -> [Output] { handshake.transportClosed().flatMap(output) }

    private func output(_ action: WebSocketCloseHandshake.Action) -> [Output] {
        switch action {
        case .sendClose(let code, let reason):
            let payload = code.map { WebSocketClosePayload(code: $0, reason: reason) } ?? .empty
            return frame(.close, (try? payload.payload()) ?? Data())
        case .closeTransport(let afterWriting): return [.closeTransport(afterWriting: afterWriting)]
        case .startTimeout(let delay): return [.startCloseTimer(delay)]
        case .cancelTimeout: return [.cancelCloseTimer]
        case .report(let result): return [.closed(result)]
        }
    }

    /// The keep-alive timer `action` starts, if it starts one (``start()`` and a Pong only start it).
    private static func timer(_ action: WebSocketKeepAlive.Action) -> Output? {
        if case .startTimer(let delay) = action { return .startKeepAliveTimer(delay) }
        return nil
    }

    /// One frame of `opcode` with `payload`, encoded for the role (a client masks it).
    private func frame(_ opcode: WebSocketOpcode, _ payload: Data) -> [Output] {
        guard let bytes = try? encoder.encode(WebSocketFrame(opcode: opcode, payload: payload)) else { return [] }
        return [.write(bytes)]
    }

    /// A whole text or binary message: compressed with RSV1 when permessage-deflate is on; one frame, or
    /// when its payload is longer than this connection's frame limit (`maxFrameSize`, 16 MiB by default)
    /// fragments of that size (RFC 6455 §5.4; RSV1 on the first only, RFC 7692 §6.1), so that a message
    /// up to the message limit reaches a peer with the same limits as ours.
    private func dataFrame(_ opcode: WebSocketOpcode, _ payload: Data) -> [Output] {
        let whole = deflate?.frame(opcode, payload) ?? WebSocketFrame(opcode: opcode, payload: payload)
        let limit = decoder.maxFrameSize
        guard whole.payload.count > limit else {
            guard let bytes = try? encoder.encode(whole) else { return [] }
            return [.write(bytes)]
        }
        var outputs: [Output] = []
        var start = whole.payload.startIndex
        while start < whole.payload.endIndex {
            let end = whole.payload.index(start, offsetBy: limit, limitedBy: whole.payload.endIndex) ?? whole.payload.endIndex
            let first = start == whole.payload.startIndex
            let fragment = WebSocketFrame(
                fin: end == whole.payload.endIndex, reservedBits: first ? whole.reservedBits : [],
                opcode: first ? opcode : .continuation, payload: whole.payload[start..<end])
            guard let bytes = try? encoder.encode(fragment) else { return [] }
            outputs.append(.write(bytes))
            start = end
        }
        return outputs
    }

    /// A close reason from `error`'s description, cut to the 123 bytes a Close frame holds.
    static func reason(_ error: WebSocketProtocolError) -> String { fitting(error.description) }

    /// `reason` cut to the whole characters that fit in a Close frame's 123 bytes.
    static func fitting(_ reason: String) -> String {
        guard reason.utf8.count > WebSocketCloseHandshake.maxReasonBytes else { return reason }
        var bytes = 0
        let kept = reason.prefix { character in
            bytes += character.utf8.count
            return bytes <= WebSocketCloseHandshake.maxReasonBytes
        }
        return String(kept)
    }
}
