import CZlib

/// One zlib stream of raw deflate data (no header or checksum, RFC 1951) for permessage-deflate: a
/// `ZStream` initialised for deflate or inflate and ended when freed.
///
/// Calls zlib's `deflateInit2_`/`inflateInit2_`, `deflateReset`/`inflateReset` and `deflateEnd`/`inflateEnd`.
final class RawZStream {
    /// Which of zlib's two machines the stream runs.
    enum Kind { case deflate, inflate }

    /// Output bytes per `deflate`/`inflate` call: 16 KiB, freed between messages.
    static let chunkBytes = 16 * 1024

    let kind: Kind
    let stream = ZStream(chunkBytes: RawZStream.chunkBytes)

    /// A compressor with `windowBits` negotiated window bits (8 is compressed with 9, see
    /// `PerMessageDeflate.deflateWindowBits`), `level` -1...9 and `memoryLevel` 1...9.
    ///
    /// zlib failing to allocate its state traps, as any Swift allocation failure does.
    init(deflateWindowBits windowBits: Int, level: Int32, memoryLevel: Int32) {
        kind = .deflate
        let status = deflateInit2_(
            stream.pointer, level, Z_DEFLATED, PerMessageDeflate.deflateWindowBits(windowBits), memoryLevel, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { fatalError("deflateInit2: \(stream.describe(status))") }
    }

    /// A decompressor keeping `windowBits` window bits of history.
    init(inflateWindowBits windowBits: Int) {
        kind = .inflate
        let status = inflateInit2_(
            stream.pointer, PerMessageDeflate.inflateWindowBits(windowBits), ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { fatalError("inflateInit2: \(stream.describe(status))") }
    }

    deinit {
        switch kind {
        case .deflate: deflateEnd(stream.pointer)
        case .inflate: inflateEnd(stream.pointer)
        }
    }

    /// Forgets the history and starts a new raw stream, keeping the allocated state.
    func reset() {
        switch kind {
        case .deflate: deflateReset(stream.pointer)
        case .inflate: inflateReset(stream.pointer)
        }
    }
}
