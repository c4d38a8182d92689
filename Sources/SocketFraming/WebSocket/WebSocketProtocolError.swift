/// Why WebSocket bytes or frames were refused: the errors of `WebSocketFrameDecoder`,
/// `WebSocketFrameEncoder`, `WebSocketMessageAssembler` and `WebSocketClosePayload`.
///
/// Each case names the rule of RFC 6455 it enforces and maps to the close code to fail the connection
/// with (``closeCode``, RFC 6455 §7.1.7, §7.4.1). A decoder or assembler that has thrown is not meant to be
/// used again, but it never traps.
public enum WebSocketProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The opcode (carried, 0x0–0xF) is one RFC 6455 §5.2 reserves: 0x3–0x7 or 0xB–0xF. 1002.
    case reservedOpcode(UInt8)
    /// Reserved bits (carried) are set that no negotiated extension claims (RFC 6455 §5.2). 1002.
    case reservedBitsSet(WebSocketReservedBits)
    /// A control frame (carried: its opcode) without FIN: control frames are never fragmented (§5.5). 1002.
    case fragmentedControlFrame(WebSocketOpcode)
    /// A control frame's payload length (carried, in bytes) is over 125 (RFC 6455 §5.5). 1002.
    case controlFrameTooLong(length: UInt64)
    /// A payload length (carried) is not in its minimal encoding: a 16-bit length under 126 or a 64-bit
    /// length under 65536 (RFC 6455 §5.2, "the minimal number of bytes MUST be used"). 1002.
    case nonMinimalLength(UInt64)
    /// A 64-bit payload length (carried) has its most significant bit set (RFC 6455 §5.2). 1002.
    case lengthTopBitSet(UInt64)
    /// A server received an unmasked frame: a client MUST mask every frame (RFC 6455 §5.1). 1002.
    case unmaskedFrame
    /// A client received a masked frame: a server MUST NOT mask (RFC 6455 §5.1). 1002.
    case maskedFrame
    /// A frame's payload of `length` bytes is over `maxFrameSize`; refused from its header, before the
    /// payload is buffered. 1009 (RFC 6455 §7.4.1).
    case frameTooLarge(length: UInt64, maxFrameSize: Int)
    /// A message would grow to `length` bytes, over `maxMessageSize`; refused before the fragment that
    /// makes it too big is kept. 1009 (RFC 6455 §7.4.1).
    case messageTooLarge(length: Int, maxMessageSize: Int)
    /// A continuation frame arrived with no fragmented message open (RFC 6455 §5.4). 1002.
    case unexpectedContinuation
    /// A text or binary frame (carried: its opcode) arrived while a fragmented message was open; only
    /// continuation and control frames may come before its last fragment (RFC 6455 §5.4). 1002.
    case dataFrameInsideMessage(WebSocketOpcode)
    /// A text message is not UTF-8 (RFC 6455 §5.6, §8.1): `offset` is the first byte, from the start of
    /// the message, that cannot belong to valid UTF-8, or the message's length when it ends inside a
    /// sequence. 1007.
    case invalidUTF8(offset: Int)
    /// A close frame's payload is 1 byte: it must be empty or start with a 2-byte code (§5.5.1). 1002.
    case closePayloadTooShort
    /// A close code (carried) that is not valid on the wire (RFC 6455 §7.4; see
    /// `WebSocketCloseCode.isValidOnWire`), received or about to be sent. 1002.
    case invalidCloseCode(UInt16)
    /// A close frame's reason is not UTF-8 (RFC 6455 §5.5.1): `offset` as in `invalidUTF8`, counted from
    /// the start of the reason. 1007.
    case invalidCloseReason(offset: Int)
    /// A close reason of `length` UTF-8 bytes does not fit a close frame: at most 123 bytes, the 125 of a
    /// control frame less the code (RFC 6455 §5.5). Only when sending. 1002.
    case closeReasonTooLong(length: Int)
    /// A compressed message (RSV1 on its first frame, permessage-deflate agreed; RFC 7692 §6.2) could not
    /// be inflated: over the message limit (`.messageTooBig`, inflating stopped there: 1009) or not valid
    /// deflate data (`.corruptData`: 1007). See `PerMessageDeflate.DecompressionError.closeCode`.
    case decompressionFailed(PerMessageDeflate.DecompressionError)
    /// The stream ended inside a frame, `bufferedBytes` of it received. 1006, reported locally and never
    /// sent: there is no connection left to send it on (RFC 6455 §7.1.5).
    case truncatedFrame(bufferedBytes: Int)

    /// The close code to fail the connection with (RFC 6455 §7.1.7): 1009 for sizes over a limit, 1007
    /// for invalid UTF-8, 1006 (never sent) for a truncated stream, the decompression error's code (1009 or
    /// 1007) for a compressed message, 1002 for everything else.
    public var closeCode: WebSocketCloseCode {
        switch self {
        case .frameTooLarge, .messageTooLarge: .messageTooBig
        case .invalidUTF8, .invalidCloseReason: .invalidPayloadData
        case .truncatedFrame: .abnormalClosure
        case .decompressionFailed(let error): WebSocketCloseCode(rawValue: error.closeCode)
        default: .protocolError
        }
    }

    /// A one-line English description with the numbers, e.g. "frame payload of 17 bytes exceeds the
    /// maximum frame size of 16 bytes".
    public var description: String {
        switch self {
        case let .reservedOpcode(opcode): "reserved opcode 0x\(String(opcode, radix: 16, uppercase: true))"
        case let .reservedBitsSet(bits): "reserved bits \(bits) set without an extension that claims them"
        case let .fragmentedControlFrame(opcode): "\(opcode) frame without FIN: control frames cannot be fragmented"
        case let .controlFrameTooLong(length): "control frame payload of \(length) bytes exceeds 125 bytes"
        case let .nonMinimalLength(length): "payload length \(length) not in its minimal encoding"
        case let .lengthTopBitSet(length): "64-bit payload length \(length) has its most significant bit set"
        case .unmaskedFrame: "unmasked frame from a client"
        case .maskedFrame: "masked frame from a server"
        case let .frameTooLarge(length, maxFrameSize):
            "frame payload of \(length) bytes exceeds the maximum frame size of \(maxFrameSize) bytes"
        case let .messageTooLarge(length, maxMessageSize):
            "message of \(length) bytes exceeds the maximum message size of \(maxMessageSize) bytes"
        case .unexpectedContinuation: "continuation frame without a message to continue"
        case let .dataFrameInsideMessage(opcode): "\(opcode) frame before the open message's last fragment"
        case let .invalidUTF8(offset): "text message is not valid UTF-8 at byte \(offset)"
        case .closePayloadTooShort: "close frame payload of 1 byte"
        case let .invalidCloseCode(code): "close code \(code) is not valid on the wire"
        case let .invalidCloseReason(offset): "close reason is not valid UTF-8 at byte \(offset)"
        case let .closeReasonTooLong(length): "close reason of \(length) bytes exceeds 123 bytes"
        case let .decompressionFailed(error): "\(error)"
        case let .truncatedFrame(bufferedBytes): "stream ended inside a frame, \(bufferedBytes) bytes of it received"
        }
    }
}
