import Foundation

/// Writes messages of one fixed length as they are: the encoding half of `FixedLengthFrameDecoder`
/// (MISSION.md M3.6). It only checks the length, so that a short message cannot shift every frame after it.
///
///     messages:  "ABC"        "DEF"
///     bytes:     | 41 42 43 | 44 45 46 |
///
/// Errors: `.wrongMessageLength(length:expectedLength:)` for a message of any other length; nothing is
/// appended then.
public struct FixedLengthFrameEncoder: FrameEncoder, Sendable {
    /// The length every message must have, in bytes.
    public let frameLength: Int

    /// Creates an encoder of `frameLength`-byte frames.
    ///
    /// - Precondition: `frameLength > 0` (a programmer error otherwise).
    public init(frameLength: Int) {
        precondition(frameLength > 0, "frameLength must be positive: \(frameLength)")
        self.frameLength = frameLength
    }

    /// Appends `message` to `out` when it has exactly `frameLength` bytes; throws
    /// `.wrongMessageLength` otherwise, leaving `out` unchanged.
    public func encode(_ message: Data, into out: inout Data) throws(FramingError) {
        guard message.count == frameLength else {
            throw .wrongMessageLength(length: message.count, expectedLength: frameLength)
        }
        out.append(message)
    }
}
