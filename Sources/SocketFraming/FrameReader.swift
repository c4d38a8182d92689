import Foundation

/// The receive buffer that peels off every complete frame (the source articles' "cache that extracts every
/// complete packet"): owns a `FrameBuffer` and a `FrameDecoder`.
///
/// Append bytes as they are read from the socket, then call `nextFrame()` until it returns nil. Once the
/// peer has closed the stream, call `finish()` until it returns nil: it delivers the last frames and throws
/// `.truncatedFrame` if a partial frame remains.
///
///     var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20))
///     reader.append(bytesJustRead)
///     while let frame = try reader.nextFrame() { handle(frame) }
public struct FrameReader<Decoder: FrameDecoder> {
    private var decoder: Decoder
    private var buffer = FrameBuffer()

    /// Creates a reader with an empty buffer that decodes with `decoder`.
    public init(decoder: Decoder) {
        self.decoder = decoder
    }

    /// The number of bytes received and not yet part of a returned frame.
    public var bufferedBytes: Int { buffer.readableBytes }

    /// Appends a copy of `bytes`, as read from the stream.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(bytes)
    }

    /// Appends a copy of `data`, as read from the stream.
    public mutating func append(_ data: Data) {
        buffer.append(data)
    }

    /// Returns the next complete frame, or nil when more bytes are needed.
    ///
    /// - Throws: what the decoder's `decode(_:)` throws. After an error the reader need not be usable again
    ///   (close the connection), but it never traps.
    public mutating func nextFrame() throws(FramingError) -> Decoder.Frame? {
        try decoder.decode(&buffer)
    }

    /// Returns the next frame after the end of the stream, or nil when none remain; call it until nil.
    ///
    /// - Throws: what the decoder's `decodeLast(_:)` throws, by default `.truncatedFrame(bufferedBytes:)`
    ///   when bytes of an incomplete frame remain.
    public mutating func finish() throws(FramingError) -> Decoder.Frame? {
        try decoder.decodeLast(&buffer)
    }
}

extension FrameReader: Sendable where Decoder: Sendable {}
