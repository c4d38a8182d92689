import Foundation

/// One WebSocket frame (RFC 6455 §5.2): what `WebSocketFrameDecoder` cuts off a byte stream and
/// `WebSocketFrameEncoder` writes.
///
///      0                   1                   2                   3
///     +-+-+-+-+-------+-+-------------+-------------------------------+
///     |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
///     |I|S|S|S|  (4)  |A|     (7)     |            (16/64)            |
///     |N|V|V|V|       |S|             |  (if payload len == 126/127)  |
///     | |1|2|3|       |K|             |                               |
///     +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
///     |  Extended payload length continued, if payload len == 127     |
///     + - - - - - - - - - - - - - - - +-------------------------------+
///     |                               | Masking-key, if MASK set to 1 |
///     +-------------------------------+-------------------------------+
///     | Masking-key (continued)       |          Payload Data         |
///     +-------------------------------- - - - - - - - - - - - - - - - +
///
/// `payload` is always the unmasked application bytes (extension data included); `maskingKey` is the key
/// the frame arrived with, for the record (nil for an unmasked frame). The encoder ignores `maskingKey`:
/// it masks by its role, with a fresh key per frame.
public struct WebSocketFrame: Hashable, Sendable, CustomStringConvertible {
    /// FIN: whether this is the last frame of its message (RFC 6455 §5.2); always true for control frames.
    public var fin: Bool
    /// RSV1–RSV3 (RFC 6455 §5.2): 0 unless a negotiated extension gives them a meaning.
    public var reservedBits: WebSocketReservedBits
    /// What the frame carries (RFC 6455 §5.2).
    public var opcode: WebSocketOpcode
    /// The masking key the frame arrived with (RFC 6455 §5.3), or nil if it was not masked.
    public var maskingKey: WebSocketMaskingKey?
    /// The payload, unmasked: `payload.count` bytes, the frame's payload length.
    public var payload: Data

    /// A frame; by default a final, unmasked one without reserved bits.
    public init(
        fin: Bool = true, reservedBits: WebSocketReservedBits = [], opcode: WebSocketOpcode,
        maskingKey: WebSocketMaskingKey? = nil, payload: Data = Data()
    ) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }

    /// RSV1 (bit 0x40 of the first byte): permessage-deflate's "compressed" bit (RFC 7692 §6).
    public var rsv1: Bool { reservedBits.contains(.rsv1) }
    /// RSV2 (bit 0x20 of the first byte).
    public var rsv2: Bool { reservedBits.contains(.rsv2) }
    /// RSV3 (bit 0x10 of the first byte).
    public var rsv3: Bool { reservedBits.contains(.rsv3) }

    /// A one-line summary, e.g. "text fin 5 bytes masked 37 fa 21 3d".
    public var description: String {
        var text = "\(opcode)\(fin ? " fin" : "")"
        if !reservedBits.isEmpty { text += " \(reservedBits)" }
        text += " \(payload.count) bytes"
        if let maskingKey { text += " masked \(maskingKey)" }
        return text
    }
}
