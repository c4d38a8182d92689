/// The errors of every codec in SocketFraming.
///
/// A decoder that has thrown is not meant to be used again: the connection it served should be closed.
/// It never traps, whatever bytes it is given afterwards.
public enum FramingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame's length, in bytes, read from or implied by its header, is over the decoder's limit; the
    /// frame is then also over the decoder's `maximumFrameLength` (or, for formats with several bounded
    /// parts, one part is over its own limit). `length` and `maxFrameLength` are counted as the limit
    /// that was exceeded counts: the whole frame for the length-field decoder (Netty's `maxFrameLength`,
    /// equal to `maximumFrameLength`); the body alone, against `maxBodyLength`, for the eight-byte and
    /// JSON header decoders, against `maxWireBodyLength` for the seven-byte header decoder; the bytes before the delimiter, against Netty's `maxFrameLength`, for the
    /// delimiter decoder (with `failFast`, the bytes known so far to precede it).
    case frameTooLong(length: Int, maxFrameLength: Int)
    /// A seven-byte header's version field (bytes 0–1, big-endian) holds a version the decoder does not
    /// accept (see `SevenByteHeaderFrameDecoder.acceptedVersions`): usually a stream that has lost its
    /// place, junk read as a header. Carries the version read. Thrown as soon as the 7 header bytes are in.
    case unsupportedVersion(UInt16)
    /// A seven-byte header's function code (bytes 2–3, big-endian) is not one the application knows (see
    /// `SevenByteHeaderFrameDecoder.isKnownFunctionCode`), or not one in the header's version. Carries the
    /// code read. Thrown as soon as the 7
    /// header bytes are in.
    case unknownFunctionCode(UInt16)
    /// A header of variable length (the JSON header) has more than `maxHeaderLength` bytes before its end
    /// marker; `length` is how many bytes are known to be in it.
    case headerTooLong(length: Int, maxHeaderLength: Int)
    /// A length field holds an impossible value: negative (also after `lengthAdjustment`), beyond `Int`, or
    /// smaller than the header it is part of. Carries the value the length field held.
    case invalidLengthField(Int64)
    /// A header field holds a value the format does not allow, e.g. a compressed flag other than 0 or 1.
    case malformedHeader(String)
    /// zlib says compressed data is not valid: carries zlib's message and return code, or what was wrong.
    case decompressionFailed(String)
    /// Decompressed data would exceed `maxBytes` bytes (a guard against compression bombs).
    case decompressedTooLarge(maxBytes: Int)
    /// The stream ended in the middle of a frame; `bufferedBytes` bytes of it were received.
    case truncatedFrame(bufferedBytes: Int)
    /// An encoder cannot write a message of `length` bytes: its length field holds at most `maxLength`.
    case messageTooLong(length: Int, maxLength: Int)
    /// A fixed-length encoder was given a message of `length` bytes; every frame has `expectedLength`.
    case wrongMessageLength(length: Int, expectedLength: Int)
    /// A delimiter encoder was given a message holding the delimiter at byte `offset`: the peer would cut
    /// the message there.
    case messageContainsDelimiter(offset: Int)
    /// A `BodyTransform` supplied by the application (an encryption hook, say) refused a body; carries
    /// the application's reason.
    case transformFailed(String)

    /// A one-line English description with the numbers, e.g. "frame of 15 bytes exceeds the maximum frame
    /// length of 14 bytes".
    public var description: String {
        switch self {
        case let .frameTooLong(length, maxFrameLength):
            "frame of \(length) bytes exceeds the maximum frame length of \(maxFrameLength) bytes"
        case let .unsupportedVersion(version):
            "unsupported header version \(version) (0x\(String(version, radix: 16, uppercase: true)))"
        case let .unknownFunctionCode(code):
            "unknown function code \(code) (0x\(String(code, radix: 16, uppercase: true)))"
        case let .invalidLengthField(value):
            "invalid length field value \(value)"
        case let .malformedHeader(reason):
            "malformed header: \(reason)"
        case let .decompressionFailed(reason):
            "decompression failed: \(reason)"
        case let .decompressedTooLarge(maxBytes):
            "decompressed data exceeds the maximum of \(maxBytes) bytes"
        case let .truncatedFrame(bufferedBytes):
            "stream ended in the middle of a frame, \(bufferedBytes) bytes of it buffered"
        case let .messageTooLong(length, maxLength):
            "message length \(length) exceeds the length field's maximum of \(maxLength)"
        case let .headerTooLong(length, maxHeaderLength):
            "header of at least \(length) bytes exceeds the maximum header length of \(maxHeaderLength) bytes"
        case let .wrongMessageLength(length, expectedLength):
            "message of \(length) bytes, expected exactly \(expectedLength) bytes"
        case let .messageContainsDelimiter(offset):
            "message contains the delimiter at byte \(offset)"
        case let .transformFailed(reason):
            "body transform failed: \(reason)"
        }
    }
}
