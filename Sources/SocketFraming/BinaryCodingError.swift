/// The errors of `BinaryEncoder` and `BinaryDecoder`; each carries the byte offset, counted from the
/// start of the encoded message, where the problem lies.
///
/// Message models are a layer above framing: a frame is cut by a `FrameDecoder` (errors: `FramingError`),
/// then its body is decoded into a model (errors: this type).
public enum BinaryCodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends at `offset`, but `neededBytes` more bytes were needed there.
    case unexpectedEnd(offset: Int, neededBytes: Int)
    /// The bytes at `offset` are not a valid value of their type: a Boolean or presence flag other than 0
    /// or 1, a string that is not UTF-8, an integer out of range for the platform's `Int`.
    case invalidValue(offset: Int, reason: String)
    /// The length or count prefix at `offset` holds `length`, more than `maxLength`: the decoder's limit
    /// when decoding, the largest value the prefix width holds when encoding.
    case lengthTooLarge(offset: Int, length: UInt64, maxLength: UInt64)
    /// The value ended at `offset`, but `count` more bytes follow it.
    case trailingBytes(offset: Int, count: Int)
    /// The type asks for something the format cannot express (see docs/BINARY-ENCODING.md): a keyed
    /// container's `allKeys`, which enums with associated values need.
    case unsupported(offset: Int, reason: String)
    /// A type's own `init(from:)` or `encode(to:)` threw (e.g. a raw value no enum case has), for the
    /// value that starts at `offset`; carries that error's description.
    case dataCorrupted(offset: Int, reason: String)

    /// The offset of the problem, in bytes from the start of the message.
    public var offset: Int {
        switch self {
        case let .unexpectedEnd(offset, _), let .invalidValue(offset, _), let .lengthTooLarge(offset, _, _),
            let .trailingBytes(offset, _), let .unsupported(offset, _), let .dataCorrupted(offset, _):
            offset
        }
    }

    /// A one-line English description with the offset, e.g. "at byte 5: needed 4 more bytes, the input
    /// ended".
    public var description: String {
        switch self {
        case let .unexpectedEnd(offset, neededBytes):
            "at byte \(offset): needed \(neededBytes) more bytes, the input ended"
        case let .invalidValue(offset, reason):
            "at byte \(offset): \(reason)"
        case let .lengthTooLarge(offset, length, maxLength):
            "at byte \(offset): length \(length) exceeds the maximum of \(maxLength)"
        case let .trailingBytes(offset, count):
            "at byte \(offset): \(count) bytes follow the end of the value"
        case let .unsupported(offset, reason):
            "at byte \(offset): unsupported: \(reason)"
        case let .dataCorrupted(offset, reason):
            "at byte \(offset): \(reason)"
        }
    }
}

/// The width of the length prefix written before every string, `Data` and array, and before every
/// dictionary's count: an unsigned big-endian integer of 1, 2, 4 or 8 bytes.
public enum BinaryLengthPrefix: Int, Sendable, CaseIterable {
    /// 1 byte: lengths up to 255.
    case uint8 = 1
    /// 2 bytes: lengths up to 65_535.
    case uint16 = 2
    /// 4 bytes: lengths up to 4_294_967_295. The default.
    case uint32 = 4
    /// 8 bytes.
    case uint64 = 8

    /// The prefix's width in bytes.
    public var byteCount: Int { rawValue }

    /// The largest length the prefix holds.
    public var maxLength: UInt64 { self == .uint64 ? .max : (UInt64(1) << UInt64(8 * rawValue)) - 1 }
}
