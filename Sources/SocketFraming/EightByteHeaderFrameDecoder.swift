import Foundation

/// Decodes eight-byte header frames (`EightByteHeaderFrame`; source article 004, MISSION.md M3.5):
/// a 4-byte service id and a 4-byte body length, big-endian, then the body, run through `transform`.
///
/// Bytes as TCP delivers them, and the frames that come out (service ids 1 and 2, no transform):
///
///     reads:   | 00 00 00 01 00 00 | 00 02 68 69 00 00 00 02 00 | 00 00 00 |
///     frames:                      (1, "hi")                      (2, "")
///
/// A frame is returned once its header and all its body bytes have arrived; until then nothing is
/// consumed. A frame occupies at most `maximumFrameLength` = 8 + `maxBodyLength` bytes on the wire (the
/// default: 8 + 1_048_576 = 1_048_584), and no more are ever buffered for one: a larger body length is
/// refused as soon as the 8 header bytes have arrived, before any of the body is stored. Give a reader
/// (a socket's read limit) `maximumFrameLength`, not `maxBodyLength`: a frame with a body of exactly
/// `maxBodyLength` bytes is 8 bytes longer.
///
/// Errors (after one, close the connection):
/// - `.frameTooLong(length:maxFrameLength:)` with the body length and `maxBodyLength` (body bytes, header
///   not counted) when the header's body length is over `maxBodyLength`, i.e. the frame is over
///   `maximumFrameLength`; thrown as soon as the header is complete, nothing is consumed;
/// - what `transform.decode` throws (for `CompressionTransform`: `.decompressedTooLarge`,
///   `.decompressionFailed`); the frame's bytes are consumed;
/// - `.truncatedFrame(bufferedBytes:)` from `decodeLast` when the stream ends inside a frame.
public struct EightByteHeaderFrameDecoder: FrameDecoder, Sendable {
    /// The most bytes a body may have on the wire (before `transform` is undone), the 8-byte header not
    /// counted; default 1 MiB (1 << 20 = 1_048_576, the same as `TCPSocket.maxBufferedReadBytes`).
    public let maxBodyLength: Int

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `EightByteHeaderFrame.headerLength` (8) + `maxBodyLength`; 1_048_584 by default.
    public var maximumFrameLength: Int { EightByteHeaderFrame.headerLength.addingSaturating(maxBodyLength) }
    /// Undoes the sender's transform on every body; default `IdentityTransform()`.
    public let transform: any BodyTransform

    /// Creates a decoder.
    ///
    /// - Precondition: `maxBodyLength >= 0` (a programmer error otherwise).
    public init(maxBodyLength: Int = 1 << 20, transform: any BodyTransform = IdentityTransform()) {
        precondition(maxBodyLength >= 0, "maxBodyLength must not be negative: \(maxBodyLength)")
        self.maxBodyLength = maxBodyLength
        self.transform = transform
    }

    /// Decodes the next frame, its body through `transform.decode`, or returns nil, consuming nothing,
    /// until the header and all body bytes have arrived. Throws as the type's documentation says.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> EightByteHeaderFrame? {
        guard let serviceID = buffer.getInteger(at: 0, as: UInt32.self, byteOrder: .bigEndian),
            let wireBodyLength = buffer.getInteger(at: 4, as: UInt32.self, byteOrder: .bigEndian)
        else { return nil }
        // On a 32-bit platform a 4-byte length may not fit an Int: too long either way.
        guard let bodyLength = Int(exactly: wireBodyLength), bodyLength <= maxBodyLength else {
            throw .frameTooLong(length: Int(clamping: wireBodyLength), maxFrameLength: maxBodyLength)
        }
        guard buffer.readableBytes - EightByteHeaderFrame.headerLength >= bodyLength else { return nil }
        buffer.moveReaderIndex(forwardBy: EightByteHeaderFrame.headerLength)
        guard let wireBody = buffer.readData(count: bodyLength) else { return nil }
        return EightByteHeaderFrame(serviceID: serviceID, body: try transform.decode(wireBody))
    }
}
