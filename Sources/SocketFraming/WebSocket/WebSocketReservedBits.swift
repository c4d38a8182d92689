/// The RSV1, RSV2 and RSV3 bits of a WebSocket frame's first byte (RFC 6455 §5.2), at their positions
/// in that byte: RSV1 is 0x40, RSV2 0x20, RSV3 0x10.
///
/// They must be 0 unless an extension negotiated in the handshake gives them a meaning (RFC 6455 §5.2);
/// permessage-deflate claims RSV1 (RFC 7692 §6). A decoder is told which ones an extension claimed
/// (`WebSocketFrameDecoder.allowedReservedBits`) and refuses the others.
public struct WebSocketReservedBits: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bits as they sit in the frame's first byte: a subset of 0x70.
    public let rawValue: UInt8

    /// The bits of `rawValue` that are reserved bits (0x70); the others are dropped.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x70 }

    /// RSV1, bit 0x40 of the first byte: the "compressed" bit of permessage-deflate (RFC 7692 §6).
    public static let rsv1 = WebSocketReservedBits(rawValue: 0x40)
    /// RSV2, bit 0x20 of the first byte.
    public static let rsv2 = WebSocketReservedBits(rawValue: 0x20)
    /// RSV3, bit 0x10 of the first byte.
    public static let rsv3 = WebSocketReservedBits(rawValue: 0x10)

    /// The bits set, e.g. "[rsv1, rsv3]".
    public var description: String {
        let names = [(Self.rsv1, "rsv1"), (.rsv2, "rsv2"), (.rsv3, "rsv3")].filter { contains($0.0) }.map(\.1)
        return "[" + names.joined(separator: ", ") + "]"
    }
}
