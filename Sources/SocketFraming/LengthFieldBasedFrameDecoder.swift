import Foundation

/// Splits a byte stream into frames by the value of a length field in each frame's header: Netty's
/// `LengthFieldBasedFrameDecoder`, with its parameters and their meaning (Netty javadoc,
/// `io.netty.handler.codec.LengthFieldBasedFrameDecoder`; MISSION.md M3.1).
///
/// Each frame is `lengthFieldOffset` bytes of header, the length field (`lengthFieldLength` bytes, unsigned,
/// in `byteOrder`), then the rest. The whole frame is
///
///     frame length = lengthFieldOffset + lengthFieldLength + (length field value + lengthAdjustment)
///
/// bytes; the decoded frame is those bytes without the first `initialBytesToStrip`. The most common
/// framing, a 4-byte big-endian body length stripped from the body (`lengthPrefixed(maxFrameLength:)`),
/// decodes TCP's reads like this:
///
///     reads:   | 00 00 00 05 68 65 | 6C 6C 6F 00 00 00 02 68 69 00 | 00 00 00 |
///     frames:                      "hello", "hi"                   ""
///
/// A header with more fields (Netty's sixth example: `lengthFieldOffset` 1, `lengthFieldLength` 2,
/// `lengthAdjustment` 1, `initialBytesToStrip` 3):
///
///     BEFORE DECODE (16 bytes)                       AFTER DECODE (13 bytes)
///     +------+--------+------+----------------+      +------+----------------+
///     | HDR1 | Length | HDR2 | Actual Content |----->| HDR2 | Actual Content |
///     | 0xCA | 0x000C | 0xFE | "HELLO, WORLD" |      | 0xFE | "HELLO, WORLD" |
///     +------+--------+------+----------------+      +------+----------------+
///
/// Errors (after one, close the connection):
/// - `.frameTooLong(length:maxFrameLength:)` when the frame length is over `maxFrameLength`. Nothing is
///   allocated for the claimed length: the frame's bytes are discarded as they arrive. With `failFast` the
///   error is thrown as soon as the length field has been read; without it, once all the frame's bytes have
///   been discarded (or at the end of the stream, from `decodeLast`). Either way decoding then resumes with
///   the next frame, as in Netty.
/// - `.invalidLengthField(value)` when the value (an 8-byte field read as signed, as Netty does) is
///   negative, negative after `lengthAdjustment`, overflows `Int`, or makes the frame shorter than
///   `initialBytesToStrip`. Thrown as soon as the length field has been read; nothing is consumed.
public struct LengthFieldBasedFrameDecoder: FrameDecoder, Sendable {
    /// The most bytes a frame may have, header included, before `initialBytesToStrip` is applied: Netty's
    /// `maxFrameLength`, which Netty compares with `lengthFieldOffset + lengthFieldLength + lengthAdjustment +`
    /// the length field's value, the whole frame as it travels. A frame of exactly this many bytes decodes;
    /// one byte more throws `.frameTooLong`. Equal to `maximumFrameLength`.
    public let maxFrameLength: Int

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `maxFrameLength`, since Netty's maximum already counts the whole frame, header and length field
    /// included, before `initialBytesToStrip`.
    public var maximumFrameLength: Int { maxFrameLength }
    /// Bytes of header before the length field.
    public let lengthFieldOffset: Int
    /// Width of the unsigned length field in bytes: 1, 2, 3, 4 or 8.
    public let lengthFieldLength: Int
    /// Byte order of the length field; default `.bigEndian` (network byte order).
    public let byteOrder: ByteOrder
    /// Bytes added to the length field's value to get the number of bytes after the length field
    /// (e.g. -2 when a 2-byte field counts itself too); default 0.
    public let lengthAdjustment: Int
    /// Bytes dropped from the front of each decoded frame (e.g. the header); default 0.
    public let initialBytesToStrip: Int
    /// Whether `.frameTooLong` is thrown as soon as the length field is read (true, the default) or only
    /// after the too-long frame's bytes have been discarded (false).
    public let failFast: Bool

    private enum State {
        /// The next frame's length field is not fully read yet.
        case waitingForLengthField
        /// The next frame's length is known; its bytes are not all here yet.
        case waitingForFrame(length: Int)
        /// Skipping the `remainingBytes` still to come of a frame of `frameLength` bytes, too long to keep.
        case discardingTooLongFrame(remainingBytes: Int, frameLength: Int)
    }

    private var state = State.waitingForLengthField

    /// Creates a decoder; the parameters are Netty's (see the type's documentation), all counts in bytes.
    ///
    /// - Precondition: `lengthFieldLength` is 1, 2, 3, 4 or 8; `lengthFieldOffset >= 0`;
    ///   `initialBytesToStrip >= 0`; `maxFrameLength >= lengthFieldOffset + lengthFieldLength`. These are
    ///   programmer errors, not network input.
    public init(
        maxFrameLength: Int,
        lengthFieldOffset: Int = 0,
        lengthFieldLength: Int,
        byteOrder: ByteOrder = .bigEndian,
        lengthAdjustment: Int = 0,
        initialBytesToStrip: Int = 0,
        failFast: Bool = true
    ) {
        precondition(
            [1, 2, 3, 4, 8].contains(lengthFieldLength),
            "lengthFieldLength must be 1, 2, 3, 4 or 8, not \(lengthFieldLength)")
        precondition(lengthFieldOffset >= 0, "lengthFieldOffset must not be negative: \(lengthFieldOffset)")
        precondition(initialBytesToStrip >= 0, "initialBytesToStrip must not be negative: \(initialBytesToStrip)")
        precondition(
            lengthFieldOffset <= maxFrameLength - lengthFieldLength,
            "maxFrameLength (\(maxFrameLength)) must be at least lengthFieldOffset "
                + "(\(lengthFieldOffset)) + lengthFieldLength (\(lengthFieldLength))")
        self.maxFrameLength = maxFrameLength
        self.lengthFieldOffset = lengthFieldOffset
        self.lengthFieldLength = lengthFieldLength
        self.byteOrder = byteOrder
        self.lengthAdjustment = lengthAdjustment
        self.initialBytesToStrip = initialBytesToStrip
        self.failFast = failFast
    }

    /// The articles' length prefix (M3.1): a 4-byte big-endian length counting only the body, stripped,
    /// so each frame is just the body.
    ///
    ///     reads:   | 00 00 00 02 68 | 69 00 00 00 00 |
    ///     frames:                   "hi", ""
    ///
    /// - Parameter maxFrameLength: the most bytes a frame may have, the 4-byte prefix included (Netty's
    ///   meaning), so bodies have at most `maxFrameLength - 4` bytes. At least 4.
    public static func lengthPrefixed(maxFrameLength: Int) -> LengthFieldBasedFrameDecoder {
        LengthFieldBasedFrameDecoder(maxFrameLength: maxFrameLength, lengthFieldLength: 4, initialBytesToStrip: 4)
    }

    /// Decodes the next frame: its bytes after the first `initialBytesToStrip`, or nil, consuming nothing,
    /// until all `frame length` bytes have arrived. While a too-long frame is being discarded, bytes are
    /// consumed and nil returned. Throws as the type's documentation says.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        if case let .discardingTooLongFrame(remainingBytes, frameLength) = state {
            let discarded = min(remainingBytes, buffer.readableBytes)
            buffer.moveReaderIndex(forwardBy: discarded)
            guard discarded == remainingBytes else {
                state = .discardingTooLongFrame(remainingBytes: remainingBytes - discarded, frameLength: frameLength)
                return nil
            }
            state = .waitingForLengthField
            if !failFast { throw .frameTooLong(length: frameLength, maxFrameLength: maxFrameLength) }
        }
        if case .waitingForLengthField = state {
            guard let frameLength = try readFrameLength(buffer) else { return nil }
            if frameLength > maxFrameLength {
                return try discardTooLongFrame(frameLength: frameLength, in: &buffer)
            }
            state = .waitingForFrame(length: frameLength)
        }
        guard case let .waitingForFrame(frameLength) = state, buffer.readableBytes >= frameLength else {
            return nil
        }
        buffer.moveReaderIndex(forwardBy: initialBytesToStrip)
        let frame = buffer.readData(count: frameLength - initialBytesToStrip)
        state = .waitingForLengthField
        return frame
    }

    /// Like `decode(_:)`; at the end of the stream it also throws the `.frameTooLong` that a decoder
    /// without `failFast` still owes for a frame that was being discarded, and `.truncatedFrame` for an
    /// incomplete frame.
    public mutating func decodeLast(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        if let frame = try decode(&buffer) { return frame }
        if case let .discardingTooLongFrame(_, frameLength) = state {
            state = .waitingForLengthField
            if !failFast { throw .frameTooLong(length: frameLength, maxFrameLength: maxFrameLength) }
            return nil
        }
        if buffer.readableBytes > 0 { throw .truncatedFrame(bufferedBytes: buffer.readableBytes) }
        return nil
    }

    /// The whole frame's length in bytes, or nil when the length field is not fully readable yet.
    func readFrameLength(_ buffer: FrameBuffer) throws(FramingError) -> Int? {
        guard let raw = buffer.withUnsafeReadableBytes({ lengthField(in: $0) }) else { return nil }
        return try frameLength(lengthField: raw)
    }

    /// The length field's value in `bytes` (read from `lengthFieldOffset`, `lengthFieldLength` bytes
    /// in `byteOrder`), or nil while `bytes` end before it: the one parser of the field, shared by
    /// ``decode(_:)`` and ``frameLength(in:)``.
    @inline(__always)
    func lengthField(in bytes: UnsafeRawBufferPointer) -> UInt64? {
        let start = lengthFieldOffset
        guard bytes.count >= start + lengthFieldLength else { return nil }
        let bigEndian = byteOrder == .bigEndian
        switch lengthFieldLength {
        case 1:
            return UInt64(bytes[start])
        case 2:
            let value = bytes.loadUnaligned(fromByteOffset: start, as: UInt16.self)
            return UInt64(bigEndian ? UInt16(bigEndian: value) : UInt16(littleEndian: value))
        case 4:
            let value = bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self)
            return UInt64(bigEndian ? UInt32(bigEndian: value) : UInt32(littleEndian: value))
        case 8:
            let value = bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            return bigEndian ? UInt64(bigEndian: value) : UInt64(littleEndian: value)
        default:
            var value: UInt64 = 0
            for index in 0..<lengthFieldLength {
                let byte = bytes[bigEndian ? start + index : start + lengthFieldLength - 1 - index]
                value = value << 8 | UInt64(byte)
            }
            return value
        }
    }

    /// The whole frame's length in bytes for the length field's value `raw`.
    func frameLength(lengthField raw: UInt64) throws(FramingError) -> Int {
        let value = Int64(bitPattern: raw)
        let lengthFieldEnd = lengthFieldOffset + lengthFieldLength
        let (adjusted, overflow1) = value.addingReportingOverflow(Int64(lengthAdjustment))
        let (frameLength, overflow2) = adjusted.addingReportingOverflow(Int64(lengthFieldEnd))
        guard value >= 0, !overflow1, !overflow2, adjusted >= 0,
            let length = Int(exactly: frameLength), length >= initialBytesToStrip
        else { throw .invalidLengthField(value) }
        return length
    }

    /// Consumes what has arrived of a frame over `maxFrameLength`, remembers how much more to skip, and
    /// throws `.frameTooLong` now (`failFast`, or all of it was here) or later.
    private mutating func discardTooLongFrame(
        frameLength: Int, in buffer: inout FrameBuffer
    ) throws(FramingError) -> Data? {
        let discarded = min(frameLength, buffer.readableBytes)
        buffer.moveReaderIndex(forwardBy: discarded)
        if discarded < frameLength {
            state = .discardingTooLongFrame(remainingBytes: frameLength - discarded, frameLength: frameLength)
            guard failFast else { return nil }
        } else {
            state = .waitingForLengthField
        }
        throw .frameTooLong(length: frameLength, maxFrameLength: maxFrameLength)
    }
}
