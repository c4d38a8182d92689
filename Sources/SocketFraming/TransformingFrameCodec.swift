import Foundation

/// Runs each frame another decoder produces through a `BodyTransform`'s `decode`: compression or
/// encryption on top of any framing whose frames are `Data` (length field, delimiter, fixed length).
///
/// With `LengthFieldBasedFrameDecoder.lengthPrefixed` and `CompressionTransform()` (zlib):
///
///     reads:   | 00 00 00 0D 78 9C CB 48 | CD C9 C9 07 00 06 2C 02 15 |
///     base:                                13 bytes: 78 9C CB 48 CD C9 C9 07 00 06 2C 02 15
///     frames:                              "hello"
///
/// Errors: those of the base decoder, then those of the transform (for `CompressionTransform`:
/// `.decompressedTooLarge`, `.decompressionFailed`).
public struct TransformingFrameDecoder<Base: FrameDecoder>: FrameDecoder where Base.Frame == Data {
    /// The decoder that cuts the wire bodies.
    public private(set) var base: Base
    /// Applied (its `decode`) to every wire body `base` cuts.
    public let transform: any BodyTransform

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `base.maximumFrameLength`. The transform runs after the frame has been cut, so it changes what the
    /// frame decodes to (a decompressed body may be longer, up to the transform's own limit), not how many
    /// bytes the frame occupies on the wire.
    public var maximumFrameLength: Int { base.maximumFrameLength }

    /// Creates a decoder that decodes with `base`, then with `transform`.
    public init(_ base: Base, transform: any BodyTransform) {
        self.base = base
        self.transform = transform
    }

    /// The next frame of `base`, transformed; nil when `base` returns nil. Consumes what `base` consumes.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        guard let wire = try base.decode(&buffer) else { return nil }
        return try transform.decode(wire)
    }

    /// The next frame of `base.decodeLast`, transformed.
    public mutating func decodeLast(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
        guard let wire = try base.decodeLast(&buffer) else { return nil }
        return try transform.decode(wire)
    }
}

extension TransformingFrameDecoder: Sendable where Base: Sendable {}

/// Runs each message through a `BodyTransform`'s `encode`, then hands the result to another encoder,
/// so the length that encoder writes is that of the transformed body (source article 004).
///
/// Errors: those of the transform, then those of the base encoder (e.g. `.messageTooLong` when the
/// transformed body does not fit its length field); nothing is appended then.
public struct TransformingFrameEncoder<Base: FrameEncoder>: FrameEncoder where Base.Message == Data {
    /// The encoder that frames the wire bodies.
    public let base: Base
    /// Applied (its `encode`) to every message before `base` frames it.
    public let transform: any BodyTransform

    /// Creates an encoder that encodes with `transform`, then with `base`.
    public init(_ base: Base, transform: any BodyTransform) {
        self.base = base
        self.transform = transform
    }

    /// Appends the frame of the transformed `message` to `out`.
    public func encode(_ message: Data, into out: inout Data) throws(FramingError) {
        try base.encode(try transform.encode(message), into: &out)
    }
}

extension TransformingFrameEncoder: Sendable where Base: Sendable {}

extension FrameDecoder where Frame == Data {
    /// This decoder, with `transform`'s `decode` applied to every frame.
    public func transformed(by transform: any BodyTransform) -> TransformingFrameDecoder<Self> {
        TransformingFrameDecoder(self, transform: transform)
    }
}

extension FrameEncoder where Message == Data {
    /// This encoder, with `transform`'s `encode` applied to every message first.
    public func transformed(by transform: any BodyTransform) -> TransformingFrameEncoder<Self> {
        TransformingFrameEncoder(self, transform: transform)
    }
}
