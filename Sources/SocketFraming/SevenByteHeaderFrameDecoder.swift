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
/// consumed. A frame occupies at most `maximumFrameLength` = 7 + `maxWireBodyLength` bytes on the wire
/// (by default 7 + 65_535 = 65_542: the 2-byte body length caps the body), and no more are ever buffered
/// for one; a decompressed body has at most `maxDecompressedBodyLength` bytes.
///
/// The header is checked as soon as its 7 bytes are in, before any wait for the body, so a stream that
/// has lost its place (junk bytes, a peer speaking another protocol) fails at once instead of waiting for
/// a body length read from the wrong bytes: the version must be one of `acceptedVersions` (default `[1]`),
/// the function code one `isKnownFunctionCode` accepts in that version (when given), the compressed flag 0
/// or 1, the body length at most `maxWireBodyLength`. After
/// two junk bytes `11 12` before a version 1 frame, the header reads as version 0x1112 and decoding
/// throws `.unsupportedVersion(0x1112)` with nothing delivered.
///
/// Errors (after one, close the connection; the decoder does not look for the next header):
/// - `.unsupportedVersion(version)` as soon as a header whose version is not in `acceptedVersions` has
///   arrived; nothing is consumed;
/// - `.unknownFunctionCode(code)` as soon as a header whose function code `isKnownFunctionCode` refuses
///   has arrived; nothing is consumed;
/// - `.malformedHeader` as soon as a header with a compressed flag other than 0 or 1 has arrived;
/// - `.frameTooLong(length: bodyLength, maxFrameLength: maxWireBodyLength)` as soon as a header whose body
///   length is over `maxWireBodyLength` has arrived (never with the default, 65_535);
/// - `.decompressedTooLarge(maxBytes: maxDecompressedBodyLength)` for a compressed body that inflates to more;
/// - `.decompressionFailed` for a compressed body that is not a valid stream in `compressionFormat`;
/// - what `transform.decode` throws (e.g. `.transformFailed` from a cipher);
/// - `.truncatedFrame(bufferedBytes:)` from `decodeLast` when the stream ends inside a frame.
public struct SevenByteHeaderFrameDecoder: FrameDecoder, Sendable {
    /// The versions accepted by default: `[1]`. Source article 003 defines the 2-byte version field without
    /// fixing a value; 1 is the first version of this project's chat protocol (docs/PROTOCOL.md; `ChatCodec`
    /// passes `ChatCodec.versions`, 1 and 2) and the one every example of the format in docs/FRAMING.md uses.
    public static let defaultAcceptedVersions: Set<UInt16> = [1]

    /// The header versions (bytes 0–1, big-endian) this decoder accepts; any other throws
    /// `.unsupportedVersion`. `nil` accepts every version (for an application that checks versions
    /// itself; it loses the early detection of a desynchronised stream). Default
    /// `defaultAcceptedVersions`, i.e. `[1]`.
    public let acceptedVersions: Set<UInt16>?
    /// Says whether a function code (bytes 2–3, big-endian) is one the application knows in the header's
    /// version (bytes 0–1, already accepted by `acceptedVersions`), called as `isKnownFunctionCode(code,
    /// version)`; a code it refuses throws `.unknownFunctionCode`. `nil` (the default) accepts every code.
    /// Called once per frame, from whatever thread decodes, as soon as the header is in.
    public let isKnownFunctionCode: (@Sendable (_ functionCode: UInt16, _ version: UInt16) -> Bool)?
    /// The most bytes a body may have on the wire (the header's body length field); a header announcing
    /// more throws `.frameTooLong` at once, before any of the body is waited for. Default 65_535
    /// (`SevenByteHeaderFrame.maxWireBodyLength`): every length the field can hold.
    public let maxWireBodyLength: Int
    /// The most bytes a decompressed body may have; default 1 MiB (1 << 20 = 1_048_576). It bounds what
    /// a compressed body inflates to, not the bytes on the wire (see `maximumFrameLength`).
    public let maxDecompressedBodyLength: Int
    /// How compressed bodies are compressed; default `.zlib` (RFC 1950).
    public let compressionFormat: CompressionFormat
    /// Undoes the sender's transform (e.g. decrypts) on every wire body, before decompression; default
    /// `IdentityTransform()`.
    public let transform: any BodyTransform

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `SevenByteHeaderFrame.headerLength` (7) + `maxWireBodyLength`; by default 7 + 65_535 (the largest
    /// 2-byte body length) = 65_542.
    public var maximumFrameLength: Int { SevenByteHeaderFrame.headerLength + maxWireBodyLength }

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - maxDecompressedBodyLength: the most bytes a decompressed body may have; default 1 MiB.
    ///   - compressionFormat: default `.zlib`.
    ///   - transform: default `IdentityTransform()`.
    ///   - acceptedVersions: the versions accepted; default `[1]` (`defaultAcceptedVersions`); `nil` for any.
    ///   - isKnownFunctionCode: says which function codes are known in which version; default `nil`, any.
    ///   - maxWireBodyLength: the most bytes of body on the wire; default 65_535.
    /// - Precondition: `maxDecompressedBodyLength >= 0`; `acceptedVersions` is nil or not empty (an empty set
    ///   would refuse every frame); `maxWireBodyLength` is 0...65_535. These are programmer errors, not
    ///   network input.
    public init(
        maxDecompressedBodyLength: Int = 1 << 20, compressionFormat: CompressionFormat = .zlib,
        transform: any BodyTransform = IdentityTransform(),
        acceptedVersions: Set<UInt16>? = SevenByteHeaderFrameDecoder.defaultAcceptedVersions,
        isKnownFunctionCode: (@Sendable (_ functionCode: UInt16, _ version: UInt16) -> Bool)? = nil,
        maxWireBodyLength: Int = SevenByteHeaderFrame.maxWireBodyLength
    ) {
        precondition(
            maxDecompressedBodyLength >= 0,
            "maxDecompressedBodyLength must not be negative: \(maxDecompressedBodyLength)")
        precondition(
            acceptedVersions.map { !$0.isEmpty } ?? true,
            "acceptedVersions must not be empty; pass nil to accept every version")
        precondition(
            (0...SevenByteHeaderFrame.maxWireBodyLength).contains(maxWireBodyLength),
            "maxWireBodyLength must be 0...65_535, not \(maxWireBodyLength)")
        self.maxDecompressedBodyLength = maxDecompressedBodyLength
        self.compressionFormat = compressionFormat
        self.transform = transform
        self.acceptedVersions = acceptedVersions
        self.isKnownFunctionCode = isKnownFunctionCode
        self.maxWireBodyLength = maxWireBodyLength
    }

    /// Decodes the next frame, its body decompressed when the flag is 1, or returns nil, consuming nothing,
    /// until the header and all body bytes have arrived. Checks the header as soon as its 7 bytes are in.
    /// Throws as the type's documentation says.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> SevenByteHeaderFrame? {
        guard let version = buffer.getInteger(at: 0, as: UInt16.self, byteOrder: .bigEndian),
            let functionCode = buffer.getInteger(at: 2, as: UInt16.self, byteOrder: .bigEndian),
            let compressedFlag = buffer.getInteger(at: 4, as: UInt8.self),
            let bodyLength = buffer.getInteger(at: 5, as: UInt16.self, byteOrder: .bigEndian)
        else { return nil }
        if let acceptedVersions, !acceptedVersions.contains(version) {
            throw .unsupportedVersion(version)
        }
        if let isKnownFunctionCode, !isKnownFunctionCode(functionCode, version) {
            throw .unknownFunctionCode(functionCode)
        }
        guard compressedFlag <= 1 else {
            throw .malformedHeader("compressed flag is \(compressedFlag), expected 0 or 1")
        }
        guard Int(bodyLength) <= maxWireBodyLength else {
            throw .frameTooLong(length: Int(bodyLength), maxFrameLength: maxWireBodyLength)
        }
        guard buffer.readableBytes >= SevenByteHeaderFrame.headerLength + Int(bodyLength) else { return nil }
        buffer.moveReaderIndex(forwardBy: SevenByteHeaderFrame.headerLength)
        guard let wireBody = buffer.readData(count: Int(bodyLength)) else { return nil }
        var body = try transform.decode(wireBody)
        if compressedFlag == 1 {
            body = try Zlib.decompress(body, format: compressionFormat, maxOutputBytes: maxDecompressedBodyLength)
        }
        return SevenByteHeaderFrame(
            version: version, functionCode: functionCode, isCompressed: compressedFlag == 1,
            body: body)
    }
}
