import CZlib
import Foundation

/// Encodes seven-byte header frames (`SevenByteHeaderFrame`; source article 003, MISSION.md M3.4),
/// compressing the body when `isCompressed` is set, then running it through `transform` (e.g. a cipher).
///
/// Messages and the bytes that go out (version 1, function code 10; "hi" plain, then "" plain):
///
///     messages:  (1, 10, plain, "hi")            (1, 10, plain, "")
///     bytes:     | 00 01 00 0A 00 00 02 68 69 | 00 01 00 0A 00 00 00 |
///
/// The header's body length is that of the body as it travels: after compression and `transform`.
///
/// Errors: what `transform.encode` throws; `.messageTooLong(length:maxLength: 65_535)` when the body on the
/// wire (after compression and `transform`) has more than 65_535 bytes. Nothing is appended then.
public struct SevenByteHeaderFrameEncoder: FrameEncoder, Sendable {
    /// zlib compression level for compressed bodies: 0...9, or -1 (`Z_DEFAULT_COMPRESSION`, i.e. 6);
    /// default -1.
    public let compressionLevel: Int32
    /// How compressed bodies are compressed; default `.zlib` (RFC 1950).
    public let compressionFormat: CompressionFormat
    /// Applied to every body after compression, before it is written; default `IdentityTransform()`.
    public let transform: any BodyTransform

    /// Creates an encoder.
    ///
    /// - Precondition: `compressionLevel` is -1...9.
    public init(
        compressionLevel: Int32 = Z_DEFAULT_COMPRESSION, compressionFormat: CompressionFormat = .zlib,
        transform: any BodyTransform = IdentityTransform()
    ) {
        precondition((-1...9).contains(compressionLevel), "zlib compression level must be -1...9, not \(compressionLevel)")
        self.compressionLevel = compressionLevel
        self.compressionFormat = compressionFormat
        self.transform = transform
    }

    /// Appends the 7-byte header and the body (compressed when `message.isCompressed`, then transformed)
    /// to `out`.
    /// Throws `.messageTooLong` as the type's documentation says; `out` is unchanged then.
    public func encode(_ message: SevenByteHeaderFrame, into out: inout Data) throws(FramingError) {
        let plainOrCompressed =
            message.isCompressed
            ? try Zlib.compress(message.body, format: compressionFormat, level: compressionLevel)
            : message.body
        let body = try transform.encode(plainOrCompressed)
        guard body.count <= SevenByteHeaderFrame.maxWireBodyLength else {
            throw .messageTooLong(length: body.count, maxLength: SevenByteHeaderFrame.maxWireBodyLength)
        }
        out.appendInteger(UInt64(message.version), byteCount: 2, byteOrder: .bigEndian)
        out.appendInteger(UInt64(message.functionCode), byteCount: 2, byteOrder: .bigEndian)
        out.append(message.isCompressed ? 1 : 0)
        out.appendInteger(UInt64(body.count), byteCount: 2, byteOrder: .bigEndian)
        out.append(body)
    }
}
