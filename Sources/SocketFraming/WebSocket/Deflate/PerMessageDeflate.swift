/// The permessage-deflate WebSocket extension (RFC 7692) on Debian's zlib: negotiation and message
/// compression, pure (bytes and parameter lists in, bytes and decisions out; no socket).
///
/// - Negotiation (RFC 7692 §5, §7.1): a server picks the first acceptable offer with
///   ``ServerConfiguration/negotiate(_:)``; a client offers with ``ClientConfiguration/offer`` and checks
///   the server's answer with ``ClientConfiguration/accept(_:)``. Both produce an ``Agreement``.
/// - Messages (RFC 7692 §7.2): a ``Compressor`` deflates each outgoing message's payload, a
///   ``Decompressor`` inflates each incoming one, bounded by a caller-given maximum size.
///
/// Window bits: the base-2 logarithm of the LZ77 sliding window, in bytes: 8 is 256 bytes, 15 is 32 KiB
/// (RFC 7692 §7.1.2). A compressor never refers further back than its window; a decompressor must keep
/// at least the peer's window of history.
///
/// ```
/// payload "Hello"           48 65 6c 6c 6f
/// deflate, Z_SYNC_FLUSH     f2 48 cd c9 c9 07 00 00 00 ff ff
/// on the wire (§7.2.1)      f2 48 cd c9 c9 07 00              (RSV1 set on the first frame)
/// inflated (§7.2.2)         f2 48 cd c9 c9 07 00 + 00 00 ff ff → 48 65 6c 6c 6f
/// ```
public enum PerMessageDeflate {
    /// The extension's registered name, `permessage-deflate` (RFC 7692 §7).
    public static let extensionName = "permessage-deflate"

    /// The window bits RFC 7692 §7.1.2 allows in `server_max_window_bits` and `client_max_window_bits`:
    /// 8 (256 bytes) to 15 (32 KiB).
    public static let windowBitsRange: ClosedRange<Int> = 8...15

    /// The 4 bytes of an empty stored block's LEN and NLEN that a compressor removes from the end of a
    /// message and a decompressor appends again (RFC 7692 §7.2.1 step 3, §7.2.2 step 1).
    static let flushTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// Which end of the connection an endpoint is: the server compresses with the `server_*` parameters
    /// and inflates with the `client_*` ones, the client the other way round.
    public enum Role: Sendable, Equatable {
        /// The end that accepted the connection (answers the offer).
        case server
        /// The end that opened the connection (makes the offer).
        case client
    }

    /// The `windowBits` to give zlib's `deflateInit2` for `bits` negotiated window bits (raw deflate:
    /// negative).
    ///
    /// zlib refuses a raw deflate stream with a 256-byte window (windowBits -8 is `Z_STREAM_ERROR` since
    /// 1.2.9; its manual: "a windowBits value of 8 ... is not supported"), so 8 is compressed with 9. This
    /// keeps the promise of a 256-byte window: zlib's deflate never refers further back than its window
    /// less its 262-byte lookahead (`MIN_LOOKAHEAD`), 250 bytes with a 512-byte window. Decompression keeps
    /// the negotiated 8, which zlib's inflate supports.
    static func deflateWindowBits(_ bits: Int) -> Int32 { -Int32(max(bits, 9)) }

    /// The `windowBits` to give zlib's `inflateInit2` for `bits` negotiated window bits (raw inflate:
    /// negative).
    static func inflateWindowBits(_ bits: Int) -> Int32 { -Int32(bits) }
}
