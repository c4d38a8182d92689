/// Cuts frames off the front of a `FrameBuffer`: the decoding half of a codec.
///
/// A decoder is a value type holding only what it must remember between calls. Feeding it the same bytes
/// all at once, one byte at a time or cut anywhere yields the same frames (the shared `DecoderVerifier`
/// of the tests checks exactly this for every codec).
///
/// Every decoder states one bound, `maximumFrameLength`, with the same meaning for all of them: the most
/// bytes one frame may occupy on the wire. A reader that buffers at most that many bytes for a frame (a
/// socket's read limit, say) never refuses a frame the decoder accepts, however TCP splits it.
public protocol FrameDecoder {
    /// What one decoded frame is.
    associatedtype Frame

    /// The most bytes, on the wire, that one frame may occupy: everything the frame is made of, its header,
    /// length field or delimiter included, counted before any `BodyTransform` or decompression is undone.
    ///
    /// It is the same for every decoder, whatever its own limits are called (Netty's `maxFrameLength`,
    /// `maxBodyLength`, `maxHeaderLength`, ...); each decoder documents how it follows from them. The
    /// contract, relied on by readers that bound their buffer with it (a socket uses it as its read's byte
    /// limit):
    ///
    /// - every frame the decoder accepts has at most `maximumFrameLength` bytes on the wire, so a frame of
    ///   exactly the maximum decodes however it is split;
    /// - `decode(_:)` never returns nil while `maximumFrameLength` or more bytes are readable: by then it
    ///   has returned a frame, thrown its typed `FramingError` (`.frameTooLong`, usually as soon as a header
    ///   says the frame is too long), or consumed the bytes of a too-long frame it is discarding.
    ///
    /// For formats whose frames have several bounded parts (a header of variable length, a body), a frame
    /// is refused as soon as one part is over its own limit, so some frames shorter than
    /// `maximumFrameLength` can still be too long; none longer is ever accepted. At least 1; in bytes.
    var maximumFrameLength: Int { get }

    /// Decodes one frame from the front of `buffer`, consuming exactly its bytes.
    ///
    /// Returns nil, leaving the buffer's readable bytes as they were, when more bytes are needed; call it
    /// again once more bytes have been appended. Call it until it returns nil to get every complete frame.
    ///
    /// - Throws: `FramingError` when the bytes cannot be a valid frame. The decoder need not be usable
    ///   afterwards, but it never traps.
    mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Frame?

    /// Decodes one frame after the stream has ended; call it until it returns nil.
    ///
    /// The default implementation calls `decode(_:)`; if that returns nil while bytes remain, it throws
    /// `FramingError.truncatedFrame(bufferedBytes:)` with the number of bytes left over.
    mutating func decodeLast(_ buffer: inout FrameBuffer) throws(FramingError) -> Frame?
}

extension FrameDecoder {
    /// Decodes one frame after the stream has ended: `decode(_:)`, then `.truncatedFrame(bufferedBytes:)`
    /// if it returned nil while bytes remain.
    public mutating func decodeLast(_ buffer: inout FrameBuffer) throws(FramingError) -> Frame? {
        if let frame = try decode(&buffer) { return frame }
        if buffer.readableBytes > 0 { throw .truncatedFrame(bufferedBytes: buffer.readableBytes) }
        return nil
    }
}

extension Int {
    /// `self + other`, or `Int.max` when the sum would overflow: for adding up byte limits (header, body,
    /// delimiter) into a `maximumFrameLength` that a caller may have made `Int.max`.
    func addingSaturating(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
