import Foundation

/// Splits a byte stream into frames of one fixed length: Netty's `FixedLengthFrameDecoder`
/// (`io.netty.handler.codec.FixedLengthFrameDecoder`; MISSION.md M3.6).
///
/// Bytes as TCP delivers them, and the frames that come out with a frame length of 3:
///
///     reads:   | 41 | 42 43 44 | 45 46 47 48 49 |
///     frames:        "ABC"       "DEF", "GHI"
///
/// A frame occupies exactly `frameLength` bytes on the wire, so `maximumFrameLength` is `frameLength`,
/// and no more are ever buffered for one frame.
///
/// Errors: `.truncatedFrame(bufferedBytes:)` from `decodeLast` when the stream ends inside a frame.
public struct FixedLengthFrameDecoder: FrameDecoder, Sendable {
    /// The length of every frame, in bytes.
    public let frameLength: Int

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `frameLength`, since every frame has exactly that many.
    public var maximumFrameLength: Int { frameLength }

    /// Creates a decoder of `frameLength`-byte frames.
    ///
    /// - Precondition: `frameLength > 0` (a programmer error otherwise).
    public init(frameLength: Int) {
        precondition(frameLength > 0, "frameLength must be positive: \(frameLength)")
        self.frameLength = frameLength
    }

    /// Decodes the next `frameLength` bytes, or returns nil, consuming nothing, until they have all arrived.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        buffer.readData(count: frameLength)
    }
}
