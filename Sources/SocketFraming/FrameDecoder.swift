/// Cuts frames off the front of a `FrameBuffer`: the decoding half of a codec.
///
/// A decoder is a value type holding only what it must remember between calls. Feeding it the same bytes
/// all at once, one byte at a time or cut anywhere yields the same frames (the shared `DecoderVerifier`
/// of the tests checks exactly this for every codec).
public protocol FrameDecoder {
    /// What one decoded frame is.
    associatedtype Frame

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
