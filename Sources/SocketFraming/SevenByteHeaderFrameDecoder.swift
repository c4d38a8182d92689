import Foundation

/// Decodes seven-byte header frames (`SevenByteHeaderFrame`; source article 003, MISSION.md M3.4),
/// undoing `transform` on every body, then decompressing bodies whose compressed flag is 1.
///
/// Bytes as TCP delivers them, and the frames that come out (all plain, version 1, function codes 10 and 11):
///
///     reads:   | 00 01 00 0A 00 00 | 02 68 69 00 01 00 0B 00 00 | 00 |
///     frames:                      (1, 10, plain, "hi")           (1, 11, plain, "")
///
/// A frame is returned once its header and all its body bytes have arrived; until then nothing is
/// consumed. At most 7 + 65_535 bytes are ever buffered for one frame, and a decompressed body has at most
/// `maxDecompressedBodyLength` bytes.
///
/// Errors (after one, close the connection):
/// - `.malformedHeader` as soon as a header with a compressed flag other than 0 or 1 has arrived;
/// - `.decompressedTooLarge(maxBytes: maxDecompressedBodyLength)` for a compressed body that inflates to more;
/// - `.decompressionFailed` for a compressed body that is not a valid stream in `compressionFormat`;
/// - what `transform.decode` throws (e.g. `.transformFailed` from a cipher);
/// - `.truncatedFrame(bufferedBytes:)` from `decodeLast` when the stream ends inside a frame.
public struct SevenByteHeaderFrameDecoder: FrameDecoder, Sendable {
    /// The most bytes a decompressed body may have; default 1 MiB (1 << 20).
    public let maxDecompressedBodyLength: Int
    /// How compressed bodies are compressed; default `.zlib` (RFC 1950).
    public let compressionFormat: CompressionFormat
    /// Undoes the sender's transform (e.g. decrypts) on every wire body, before decompression; default
    /// `IdentityTransform()`.
    public let transform: any BodyTransform

    /// Creates a decoder.
    ///
    /// - Precondition: `maxDecompressedBodyLength >= 0`.
    public init(maxDecompressedBodyLength: Int = 1 << 20, compressionFormat: CompressionFormat = .zlib,
                transform: any BodyTransform = IdentityTransform()) {
        precondition(maxDecompressedBodyLength >= 0,
                     "maxDecompressedBodyLength must not be negative: \(maxDecompressedBodyLength)")
        self.maxDecompressedBodyLength = maxDecompressedBodyLength
        self.compressionFormat = compressionFormat
        self.transform = transform
    }

    /// Decodes the next frame, its body decompressed when the flag is 1, or returns nil, consuming nothing,
    /// until the header and all body bytes have arrived. Throws as the type's documentation says.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> SevenByteHeaderFrame? {
        guard let version = buffer.getInteger(at: 0, as: UInt16.self, byteOrder: .bigEndian),
              let functionCode = buffer.getInteger(at: 2, as: UInt16.self, byteOrder: .bigEndian),
              let compressedFlag = buffer.getInteger(at: 4, as: UInt8.self),
              let bodyLength = buffer.getInteger(at: 5, as: UInt16.self, byteOrder: .bigEndian)
        else { return nil }
        guard compressedFlag <= 1 else {
            throw .malformedHeader("compressed flag is \(compressedFlag), expected 0 or 1")
        }
        guard buffer.readableBytes >= SevenByteHeaderFrame.headerLength + Int(bodyLength) else { return nil }
        buffer.moveReaderIndex(forwardBy: SevenByteHeaderFrame.headerLength)
        guard let wireBody = buffer.readData(count: Int(bodyLength)) else { return nil }
        var body = try transform.decode(wireBody)
        if compressedFlag == 1 {
            body = try Zlib.decompress(body, format: compressionFormat, maxOutputBytes: maxDecompressedBodyLength)
        }
        return SevenByteHeaderFrame(version: version, functionCode: functionCode, isCompressed: compressedFlag == 1,
                                    body: body)
    }
}
