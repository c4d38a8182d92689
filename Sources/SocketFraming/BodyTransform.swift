import Foundation

/// A reversible change applied to a frame's body between the message and the wire: compression,
/// encryption, or both in turn (source article 004; MISSION.md M3.5).
///
/// Codecs that take a transform write the *transformed* body and put *its* length in the header, as the
/// articles require ("if the data is encrypted, the length is the length after encryption"):
///
///     message body  --encode-->  wire body  (its length goes into the header)
///     wire body     --decode-->  message body
///
/// Implement it to plug in a cipher; `CompressionTransform` and `IdentityTransform` come with the module,
/// and `then(_:)` chains two transforms. Both methods run once per frame on the caller's thread.
public protocol BodyTransform: Sendable {
    /// Turns a message body into the bytes that travel.
    ///
    /// - Throws: a `FramingError`; an application's own failure is `.transformFailed(reason)`.
    func encode(_ body: Data) throws(FramingError) -> Data

    /// Turns received bytes back into the message body; the inverse of `encode(_:)`.
    ///
    /// - Throws: a `FramingError` when the bytes are not a valid output of `encode(_:)` (a wrong
    ///   checksum, a failed authentication: `.transformFailed(reason)`), or when the result would be larger
    ///   than the transform allows (`.decompressedTooLarge`).
    func decode(_ body: Data) throws(FramingError) -> Data
}

extension BodyTransform {
    /// This transform, then `next`: encoding runs `self` then `next`, decoding runs `next` then `self`.
    /// Compress before you encrypt: `CompressionTransform(...).then(myCipher)`.
    public func then<Next: BodyTransform>(_ next: Next) -> ComposedTransform<Self, Next> {
        ComposedTransform(self, next)
    }
}

/// The transform that changes nothing: the default of every codec that takes a transform.
public struct IdentityTransform: BodyTransform {
    /// Creates the identity transform.
    public init() {}

    /// Returns `body` unchanged.
    public func encode(_ body: Data) throws(FramingError) -> Data { body }

    /// Returns `body` unchanged.
    public func decode(_ body: Data) throws(FramingError) -> Data { body }
}

/// Two transforms in turn: `first`, then `second` when encoding; `second`, then `first` when decoding.
public struct ComposedTransform<First: BodyTransform, Second: BodyTransform>: BodyTransform {
    /// Applied first when encoding, last when decoding.
    public let first: First
    /// Applied last when encoding, first when decoding.
    public let second: Second

    /// Chains `first` and `second`; see also `BodyTransform.then(_:)`.
    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    /// `second.encode(first.encode(body))`; throws what either throws.
    public func encode(_ body: Data) throws(FramingError) -> Data {
        try second.encode(try first.encode(body))
    }

    /// `first.decode(second.decode(body))`; throws what either throws.
    public func decode(_ body: Data) throws(FramingError) -> Data {
        try first.decode(try second.decode(body))
    }
}

/// A transform made of two closures: the quickest way to hook in a cipher.
///
///     let cipher = ClosureTransform(encode: { try seal($0) }, decode: { try open($0) })
public struct ClosureTransform: BodyTransform {
    private let encodeBody: @Sendable (Data) throws(FramingError) -> Data
    private let decodeBody: @Sendable (Data) throws(FramingError) -> Data

    /// Creates a transform that calls `encode` on outgoing and `decode` on incoming bodies.
    public init(
        encode: @escaping @Sendable (Data) throws(FramingError) -> Data,
        decode: @escaping @Sendable (Data) throws(FramingError) -> Data
    ) {
        encodeBody = encode
        decodeBody = decode
    }

    /// Calls the `encode` closure; throws what it throws.
    public func encode(_ body: Data) throws(FramingError) -> Data { try encodeBody(body) }

    /// Calls the `decode` closure; throws what it throws.
    public func decode(_ body: Data) throws(FramingError) -> Data { try decodeBody(body) }
}
