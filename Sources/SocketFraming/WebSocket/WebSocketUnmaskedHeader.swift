/// A frame header without its masking key (RFC 6455 §5.2), as a value on the stack: 2 to 10 bytes in
/// ``bytes``, the first ``count`` of them (``WebSocketFrameEncoder``'s headers are built on it).
struct WebSocketUnmaskedHeader: Sendable {
    /// The header's bytes in wire order; only the first ``count`` are the header.
    private(set) var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    /// How many of ``bytes`` are the header: 2, 4 or 10.
    let count: Int

    /// A header whose first byte is `first` (FIN, reserved bits, opcode) and whose second byte carries
    /// `maskBit` (0 or 0x80) with the length; a masking key, if any, is the caller's to append.
    init(first: UInt8, payloadLength: Int, maskBit: UInt8) {
        let extended = WebSocketFrameHeader.extendedLengthBytes(forPayloadLength: payloadLength)
        count = 2 + extended
        let wide = UInt64(payloadLength)
        withUnsafeMutableBytes(of: &bytes) { header in
            header[0] = first
            switch extended {
            case 0: header[1] = maskBit | UInt8(payloadLength)
            case 2: header[1] = maskBit | 126
            default: header[1] = maskBit | 127
            }
            for index in 0..<extended { header[2 + index] = UInt8(truncatingIfNeeded: wide >> (8 * UInt64(extended - 1 - index))) }
        }
    }
}
