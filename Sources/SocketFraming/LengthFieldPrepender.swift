import Foundation

/// Writes each message behind a length field: Netty's `LengthFieldPrepender`
/// (`io.netty.handler.codec.LengthFieldPrepender`), the encoding half of `LengthFieldBasedFrameDecoder`.
///
/// The field holds `message.count + lengthAdjustment`, plus `lengthFieldLength` when
/// `lengthIncludesLengthFieldLength`, as an unsigned integer of `lengthFieldLength` bytes in `byteOrder`.
/// With a 2-byte big-endian field:
///
///     messages:  "HELLO, WORLD"                    ""
///     bytes:     | 00 0C 48 45 4C 4C 4F 2C 20 57 4F 52 4C 44 | 00 00 |
///
/// Decode with `LengthFieldBasedFrameDecoder(maxFrameLength:lengthFieldLength:byteOrder:lengthAdjustment:
/// initialBytesToStrip:)` using the same `lengthFieldLength` and `byteOrder`, `lengthAdjustment` negated
/// (minus `lengthFieldLength` more when the length includes the field) and `initialBytesToStrip` equal to
/// `lengthFieldLength`.
///
/// Errors: `.messageTooLong(length:maxLength:)` when the length does not fit the field (over 255, 65_535,
/// 16_777_215 or 4_294_967_295 bytes for 1 to 4 byte fields; `Int.max` for 8); `.invalidLengthField` when
/// it is negative after `lengthAdjustment`. Nothing is appended then.
public struct LengthFieldPrepender: FrameEncoder, Sendable {
    /// Width of the length field in bytes: 1, 2, 3, 4 or 8.
    public let lengthFieldLength: Int
    /// Byte order of the length field; default `.bigEndian` (network byte order).
    public let byteOrder: ByteOrder
    /// Bytes added to the message length before it is written; default 0.
    public let lengthAdjustment: Int
    /// Whether the written length counts the length field's own bytes too; default false.
    public let lengthIncludesLengthFieldLength: Bool

    /// Creates an encoder; the parameters are Netty's, counts in bytes.
    ///
    /// - Precondition: `lengthFieldLength` is 1, 2, 3, 4 or 8 (a programmer error otherwise).
    public init(
        lengthFieldLength: Int,
        byteOrder: ByteOrder = .bigEndian,
        lengthAdjustment: Int = 0,
        lengthIncludesLengthFieldLength: Bool = false
    ) {
        precondition(
            [1, 2, 3, 4, 8].contains(lengthFieldLength),
            "lengthFieldLength must be 1, 2, 3, 4 or 8, not \(lengthFieldLength)")
        self.lengthFieldLength = lengthFieldLength
        self.byteOrder = byteOrder
        self.lengthAdjustment = lengthAdjustment
        self.lengthIncludesLengthFieldLength = lengthIncludesLengthFieldLength
    }

    /// The largest length the field can hold.
    public var maxLength: Int {
        lengthFieldLength == 8 ? Int.max : Int(clamping: (UInt64(1) << UInt64(8 * lengthFieldLength)) - 1)
    }

    /// Appends the length field, then `message`, to `out`. Throws as the type's documentation says;
    /// `out` is unchanged then.
    public func encode(_ message: Data, into out: inout Data) throws(FramingError) {
        let extra = lengthIncludesLengthFieldLength ? lengthFieldLength : 0
        let (adjusted, overflow1) = message.count.addingReportingOverflow(lengthAdjustment)
        let (length, overflow2) = adjusted.addingReportingOverflow(extra)
        if overflow1 || overflow2 { throw .messageTooLong(length: message.count, maxLength: maxLength) }
        guard length >= 0 else { throw .invalidLengthField(Int64(length)) }
        guard length <= maxLength else { throw .messageTooLong(length: length, maxLength: maxLength) }
        out.appendInteger(UInt64(length), byteCount: lengthFieldLength, byteOrder: byteOrder)
        out.append(message)
    }
}
