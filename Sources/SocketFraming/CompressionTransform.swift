import CZlib
import Foundation

/// Compresses bodies with zlib (RFC 1950), gzip (RFC 1952) or raw deflate (RFC 1951), through Debian's
/// zlib, and refuses to inflate a body beyond `maxDecompressedBytes`.
///
/// A compression bomb (a few hundred bytes that inflate to gigabytes) is stopped after
/// `maxDecompressedBytes + 1` bytes of output with `.decompressedTooLarge`; memory never grows beyond
/// that, whatever the body claims.
public struct CompressionTransform: BodyTransform {
    /// The container around the deflate data; default `.zlib`.
    public let format: CompressionFormat
    /// zlib compression level: 0...9, or -1 (`Z_DEFAULT_COMPRESSION`, i.e. 6); default -1.
    public let level: Int32
    /// The most bytes a decoded (inflated) body may have; default 1 MiB (1 << 20).
    public let maxDecompressedBytes: Int

    /// Creates a compression transform.
    ///
    /// - Precondition: `level` is -1...9 and `maxDecompressedBytes >= 0` (programmer errors).
    public init(
        format: CompressionFormat = .zlib, level: Int32 = Z_DEFAULT_COMPRESSION,
        maxDecompressedBytes: Int = 1 << 20
    ) {
        precondition((-1...9).contains(level), "zlib compression level must be -1...9, not \(level)")
        precondition(maxDecompressedBytes >= 0, "maxDecompressedBytes must not be negative: \(maxDecompressedBytes)")
        self.format = format
        self.level = level
        self.maxDecompressedBytes = maxDecompressedBytes
    }

    /// Compresses `body` into one complete stream of `format`, header and trailer included.
    public func encode(_ body: Data) throws(FramingError) -> Data {
        try Zlib.compress(body, format: format, level: level)
    }

    /// Inflates `body`, one complete stream of `format`.
    ///
    /// - Throws: `.decompressedTooLarge(maxBytes: maxDecompressedBytes)` for output beyond the maximum;
    ///   `.decompressionFailed` when `body` is not exactly one valid stream (see `Zlib.decompress`).
    public func decode(_ body: Data) throws(FramingError) -> Data {
        try Zlib.decompress(body, format: format, maxOutputBytes: maxDecompressedBytes)
    }
}
