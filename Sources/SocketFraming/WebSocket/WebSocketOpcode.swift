/// What a WebSocket frame carries: the low 4 bits of its first byte (RFC 6455 §5.2, §11.8).
///
/// Data frames (`continuation`, `text`, `binary`) carry a message; control frames (`close`, `ping`,
/// `pong`, the opcodes with bit 0x8 set) manage the connection (RFC 6455 §5.5). The opcodes the RFC
/// reserves for later (0x3–0x7, 0xB–0xF) have no case: `WebSocketFrameDecoder` refuses them with
/// `WebSocketProtocolError.reservedOpcode` (close code 1002).
public enum WebSocketOpcode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 0x0: the next fragment of a message begun by a `text` or `binary` frame (RFC 6455 §5.4).
    case continuation = 0x0
    /// 0x1: the first (or only) frame of a message of UTF-8 text (RFC 6455 §5.6).
    case text = 0x1
    /// 0x2: the first (or only) frame of a message of binary data (RFC 6455 §5.6).
    case binary = 0x2
    /// 0x8: the close handshake; the payload, if any, is a close code and a reason (RFC 6455 §5.5.1).
    case close = 0x8
    /// 0x9: a ping, which the peer answers with a pong carrying the same payload (RFC 6455 §5.5.2).
    case ping = 0x9
    /// 0xA: a pong, the answer to a ping or an unsolicited heartbeat (RFC 6455 §5.5.3).
    case pong = 0xA

    /// Whether this is a control frame's opcode (bit 0x8 set: close, ping, pong). Control frames carry at
    /// most 125 payload bytes and are never fragmented (RFC 6455 §5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }

    /// The opcode's name as in RFC 6455 §5.2, e.g. "text".
    public var description: String {
        switch self {
        case .continuation: "continuation"
        case .text: "text"
        case .binary: "binary"
        case .close: "close"
        case .ping: "ping"
        case .pong: "pong"
        }
    }
}
