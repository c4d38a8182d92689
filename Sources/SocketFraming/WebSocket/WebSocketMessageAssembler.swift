import Foundation

/// Joins the fragments of WebSocket messages (RFC 6455 §5.4) and checks the rules that span frames:
/// frames in, whole messages and control frames out.
///
///     frames:    text "Hel" (no FIN), ping "p", continuation fin "lo", binary fin 01 02
///     messages:                       .ping("p"), .text("Hello"),         .binary(01 02)
///
/// Rules (each error's `closeCode` is what to fail the connection with):
/// - a message is a text or binary frame, then continuation frames up to one with FIN; control frames may
///   come between them and are handed on at once. A continuation with no message open throws
///   `.unexpectedContinuation`, a text or binary frame while one is open `.dataFrameInsideMessage` (1002);
/// - a message over ``maxMessageSize`` bytes throws `.messageTooLarge` (1009) before the fragment that
///   would make it too big is kept;
/// - text is checked as UTF-8 fragment by fragment (RFC 6455 §8.1: fail fast): `.invalidUTF8` (1007) as
///   soon as a fragment holds a byte that cannot be UTF-8, even before the message's last fragment; a
///   character may be split across fragments, but a message must not end inside one;
/// - a close frame's payload is parsed and checked (`WebSocketClosePayload(payload:)`).
///
/// The frames' payloads are taken as the message's bytes. An extension that transforms payloads
/// (permessage-deflate) sits between `WebSocketFrameDecoder` and the assembler and hands on the frames
/// it has undone; the assembler does not look at reserved bits.
public struct WebSocketMessageAssembler: Sendable {
    /// The default ``maxMessageSize``: 64 MiB (67,108,864 bytes), the library default.
    public static let defaultMaxMessageSize = 64 * 1024 * 1024

    /// The most bytes a message may have, all its fragments together; more throws `.messageTooLarge`
    /// (close code 1009). Default 64 MiB.
    public let maxMessageSize: Int

    /// A message being assembled: its type, its bytes so far, and for text the UTF-8 check's state.
    private struct OpenMessage: Sendable {
        var isText: Bool
        var bytes: Data
        var validator: UTF8Validator
    }

    private var open: OpenMessage?

    /// An assembler with no message open.
    ///
    /// - Precondition: `maxMessageSize >= 0` (a programmer error).
    public init(maxMessageSize: Int = WebSocketMessageAssembler.defaultMaxMessageSize) {
        precondition(maxMessageSize >= 0, "maxMessageSize must not be negative: \(maxMessageSize)")
        self.maxMessageSize = maxMessageSize
    }

    /// Whether a fragmented message has begun and its last fragment has not arrived yet.
    public var isAssemblingMessage: Bool { open != nil }

    /// The UTF-8 check a frame of `opcode` would continue, for looking at a text frame's bytes before the
    /// whole frame has arrived (RFC 6455 §8.1, fail fast): a fresh validator at offset 0 for a text frame
    /// with no message open, a copy of the open text message's validator and its length so far for a
    /// continuation; nil for anything else (binary, control, or a frame ``append(_:)`` will refuse).
    public func textValidator(forFrameWith opcode: WebSocketOpcode) -> (validator: UTF8Validator, messageOffset: Int)? {
        switch (opcode, open) {
        case (.text, nil): return (UTF8Validator(), 0)
        case (.continuation, let message?) where message.isText: return (message.validator, message.bytes.count)
        default: return nil
        }
    }

    /// Takes the next frame: returns the message it completes, the control frame it is, or nil when it is
    /// a fragment of a message not complete yet.
    ///
    /// - Throws: `WebSocketProtocolError` as the type's documentation lists; the assembler should not be
    ///   used afterwards.
    public mutating func append(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        try append(frame, checkedText: nil)
    }

    /// ``append(_:)`` for a text frame (or a text message's continuation) whose first `checkedText.count`
    /// payload bytes were already checked, before the frame had all arrived, by `checkedText.validator`
    /// (from ``textValidator(forFrameWith:)`` for this frame): only the bytes after them are checked.
    /// nil: none were.
    package mutating func append(
        _ frame: WebSocketFrame, checkedText: (validator: UTF8Validator, count: Int)?
    ) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping, .pong, .close:
            return try control(frame)
        case .continuation:
            guard var message = open else { throw .unexpectedContinuation }
            open = nil
            try add(frame.payload, to: &message, checkedText: checkedText)
            guard frame.fin else {
                open = message
                return nil
            }
            return try finish(message)
        case .text, .binary:
            if open != nil { throw .dataFrameInsideMessage(frame.opcode) }
            var message = OpenMessage(isText: frame.opcode == .text, bytes: Data(), validator: UTF8Validator())
            try add(frame.payload, to: &message, checkedText: checkedText)
            guard frame.fin else {
                open = message
                return nil
            }
            return try finish(message)
        }
    }

    /// Checks a fragment against the size limit and, for text, as UTF-8 (from `checkedText.count` on,
    /// with its validator, when given), then keeps its bytes.
    private func add(
        _ payload: Data, to message: inout OpenMessage, checkedText: (validator: UTF8Validator, count: Int)?
    ) throws(WebSocketProtocolError) {
        let (length, overflow) = message.bytes.count.addingReportingOverflow(payload.count)
        guard !overflow, length <= maxMessageSize else {
            throw .messageTooLarge(length: overflow ? .max : length, maxMessageSize: maxMessageSize)
        }
        if message.isText {
            let skipped = min(max(checkedText?.count ?? 0, 0), payload.count)
            if let checkedText { message.validator = checkedText.validator }
            let invalid = payload.withUnsafeBytes { bytes in
                message.validator.validate(UnsafeRawBufferPointer(rebasing: bytes[skipped...]))
            }
            if let invalid { throw .invalidUTF8(offset: message.bytes.count + skipped + invalid) }
        }
        if message.bytes.isEmpty {
            message.bytes = payload
        } else {
            message.bytes.append(payload)
        }
    }

    /// The message whose last fragment has been added.
    private func finish(_ message: OpenMessage) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard message.isText else { return .binary(message.bytes) }
        guard message.validator.isAtCharacterBoundary else { throw .invalidUTF8(offset: message.bytes.count) }
        return .text(String(decoding: message.bytes, as: UTF8.self))
    }

    /// A control frame, checked again (it may not come from `WebSocketFrameDecoder`).
    private func control(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard frame.fin else { throw .fragmentedControlFrame(frame.opcode) }
        guard frame.payload.count <= 125 else { throw .controlFrameTooLong(length: UInt64(frame.payload.count)) }
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        default: return .close(try WebSocketClosePayload(payload: frame.payload))
        }
    }
}
