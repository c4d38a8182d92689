import Foundation

/// Encodes eight-byte header frames (`EightByteHeaderFrame`; source article 004, MISSION.md M3.5),
/// running each body through `transform` first and writing the transformed body's length.
///
/// Messages and the bytes that go out (no transform):
///
///     messages:  (1, "hi")                          (2, "")
///     bytes:     | 00 00 00 01 00 00 00 02 68 69 | 00 00 00 02 00 00 00 00 |
///
/// Errors: what `transform.encode` throws; `.messageTooLong(length:maxLength: 4_294_967_295)` when the
/// transformed body has more bytes than a 4-byte length holds. Nothing is appended then.
public struct EightByteHeaderFrameEncoder: FrameEncoder, Sendable {
    /// Applied to every body before it is written; default `IdentityTransform()`.
    public let transform: any BodyTransform

    /// Creates an encoder.
    public init(transform: any BodyTransform = IdentityTransform()) {
        self.transform = transform
    }

    /// Appends the 8-byte header and the transformed body to `out`. Throws as the type's documentation
    /// says; `out` is unchanged then.
    public func encode(_ message: EightByteHeaderFrame, into out: inout Data) throws(FramingError) {
        let body = try transform.encode(message.body)
        guard body.count <= EightByteHeaderFrame.maxWireBodyLength else {
            throw .messageTooLong(length: body.count, maxLength: EightByteHeaderFrame.maxWireBodyLength)
        }
        out.appendInteger(UInt64(message.serviceID), byteCount: 4, byteOrder: .bigEndian)
        out.appendInteger(UInt64(body.count), byteCount: 4, byteOrder: .bigEndian)
        out.append(body)
    }
}
