import Foundation

/// One message of the eight-byte header protocol (source article 004; MISSION.md M3.5).
///
/// On the wire, both integers big-endian (network byte order):
///
///     +------------+-------------+---------------------------------+
///     | service id | body length | body                            |
///     | 4 bytes    | 4 bytes     | body length bytes               |
///     | UInt32     | UInt32      | as transformed (e.g. encrypted) |
///     +------------+-------------+---------------------------------+
///
/// The body length counts the body as it travels, i.e. after any `BodyTransform` (compression,
/// encryption): "if the data is encrypted, the length is the length after encryption". `body` here is
/// always the plain body.
public struct EightByteHeaderFrame: Equatable, Sendable {
    /// Bytes of header before the body: 8.
    public static let headerLength = 8
    /// The most bytes a body can have on the wire: 4_294_967_295, the largest 4-byte body length.
    public static let maxWireBodyLength = Int(UInt32.max)

    /// What the message is for (the articles' "service number"), as the application defines it.
    public var serviceID: UInt32
    /// The plain body (after the decoder's transform has undone the sender's).
    public var body: Data

    /// Creates a frame.
    public init(serviceID: UInt32, body: Data) {
        self.serviceID = serviceID
        self.body = body
    }
}
