/// The fixed part of a WebSocket frame before its payload (RFC 6455 §5.2): 2 to 14 bytes.
package struct WebSocketFrameHeader: Hashable, Sendable {
    package var fin: Bool
    package var reservedBits: WebSocketReservedBits
    package var opcode: WebSocketOpcode
    package var maskingKey: WebSocketMaskingKey?
    /// The payload length in bytes, already checked against the decoder's limit.
    package var payloadLength: Int
    /// The header's own length in bytes: 2, plus 2 or 8 for an extended length, plus 4 for a masking key.
    package var headerLength: Int

    /// The rules a header is checked against while it is read.
    struct Rules: Hashable, Sendable {
        var role: WebSocketRole
        var allowedReservedBits: WebSocketReservedBits
        var maxFrameSize: Int
    }

    /// Bytes of the extended length field for a payload of `length` bytes, in its minimal encoding: 0 up to
    /// 125, 2 up to 65535, else 8 (RFC 6455 §5.2).
    static func extendedLengthBytes(forPayloadLength length: Int) -> Int {
        length <= 125 ? 0 : length <= 0xFFFF ? 2 : 8
    }

    /// Reads the header at the start of `bytes`, or returns nil when more bytes are needed. Each rule is
    /// checked as soon as the bytes it depends on are readable, so a bad frame is refused as early as can
    /// be: byte 0 (opcode, reserved bits, FIN of a control frame), byte 1 (mask by role, a control frame's
    /// length), then the extended length (minimal encoding, top bit, `maxFrameSize`). Consumes nothing.
    static func parse(_ bytes: UnsafeRawBufferPointer, rules: Rules) throws(WebSocketProtocolError) -> Self? {
        guard bytes.count >= 1 else { return nil }
        let first = bytes[0]
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { throw .reservedOpcode(first & 0x0F) }
        let reservedBits = WebSocketReservedBits(rawValue: first)
        let refusedBits = reservedBits.subtracting(rules.allowedReservedBits)
        guard refusedBits.isEmpty else { throw .reservedBitsSet(refusedBits) }
        let fin = first & 0x80 != 0
        if opcode.isControl && !fin { throw .fragmentedControlFrame(opcode) }

        guard bytes.count >= 2 else { return nil }
        let second = bytes[1]
        let masked = second & 0x80 != 0
        switch (rules.role, masked) {
        case (.server, false): throw .unmaskedFrame
        case (.client, true): throw .maskedFrame
        default: break
        }
        let shortLength = second & 0x7F
        if opcode.isControl && shortLength > 125 { throw .controlFrameTooLong(length: UInt64(shortLength)) }

        guard let (length, lengthEnd) = try readLength(shortLength, in: bytes) else { return nil }
        guard length <= UInt64(rules.maxFrameSize) else {
            throw .frameTooLarge(length: length, maxFrameSize: rules.maxFrameSize)
        }
        var header = WebSocketFrameHeader(
            fin: fin, reservedBits: reservedBits, opcode: opcode, maskingKey: nil, payloadLength: Int(length),
            headerLength: lengthEnd)
        if masked {
            guard bytes.count >= lengthEnd + 4 else { return nil }
            header.maskingKey = WebSocketMaskingKey(
                bytes[lengthEnd], bytes[lengthEnd + 1], bytes[lengthEnd + 2], bytes[lengthEnd + 3])
            header.headerLength += 4
        }
        return header
    }

    /// The payload length and the offset just after the length field, or nil when the extended length
    /// (2 or 8 bytes, network byte order) is not all readable yet.
    private static func readLength(
        _ shortLength: UInt8, in bytes: UnsafeRawBufferPointer
    ) throws(WebSocketProtocolError) -> (UInt64, Int)? {
        switch shortLength {
        case 126:
            guard bytes.count >= 4 else { return nil }
            let length = UInt64(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
            guard length > 125 else { throw .nonMinimalLength(length) }
            return (length, 4)
        case 127:
            guard bytes.count >= 10 else { return nil }
            let length = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
            guard length >> 63 == 0 else { throw .lengthTopBitSet(length) }
            guard length > 0xFFFF else { throw .nonMinimalLength(length) }
            return (length, 10)
        default:
            return (UInt64(shortLength), 2)
        }
    }
}
