/// The header of an unmasked final frame (a server's, RFC 6455 §5.2) with no reserved bits, as a value
/// on the stack: 2 to 10 bytes in ``bytes``, the first ``count`` of them. For a connection that writes the
/// header and the payload as they are, with no frame `Data` and no closure in between: the caller reads
/// the bytes with `withUnsafeBytes(of:)` in its own module.
package struct WebSocketUnmaskedHeader: Sendable {
    /// The header's bytes in wire order; only the first ``count`` are the header.
    package private(set) var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    /// How many of ``bytes`` are the header: 2, 4 or 10.
    package let count: Int

    /// The header of a frame of `opcode` carrying `payloadLength` bytes: the length in its fewest bytes
    /// (7 bits, or 126 / 127 and 16 / 64 bits in network byte order).
    package init(opcode: WebSocketOpcode, payloadLength: Int) {
        self.init(first: 0x80 | opcode.rawValue, payloadLength: payloadLength, maskBit: 0)
    }

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
