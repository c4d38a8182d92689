import Foundation

/// One message of the seven-byte header protocol (source article 003; MISSION.md M3.4).
///
/// On the wire, all integers big-endian (network byte order):
///
///     +---------+---------------+------------+-------------+---------------------+
///     | version | function code | compressed | body length | body                |
///     | 2 bytes | 2 bytes       | 1 byte     | 2 bytes     | body length bytes   |
///     | UInt16  | UInt16        | 0 no, 1 yes| UInt16      | as sent (compressed |
///     |         |               |            |             | when the flag is 1) |
///     +---------+---------------+------------+-------------+---------------------+
///
/// The body length counts the body as it travels, i.e. after compression, so a body is at most 65_535
/// bytes on the wire. `body` here is always the plain (decompressed) body; `isCompressed` says how it
/// travelled or is to travel.
public struct SevenByteHeaderFrame: Equatable, Sendable {
    /// Bytes of header before the body: 7.
    public static let headerLength = 7
    /// The most bytes a body can have on the wire: 65_535, the largest 2-byte body length.
    public static let maxWireBodyLength = Int(UInt16.max)

    /// Protocol version, as the application defines it.
    public var version: UInt16
    /// Message type, as the application defines it.
    public var functionCode: UInt16
    /// Whether the body travels compressed (flag 1) or plain (flag 0).
    public var isCompressed: Bool
    /// The plain body (decompressed when it travelled compressed), usually JSON.
    public var body: Data

    /// Creates a frame; `isCompressed` defaults to false.
    public init(version: UInt16, functionCode: UInt16, isCompressed: Bool = false, body: Data) {
        self.version = version
        self.functionCode = functionCode
        self.isCompressed = isCompressed
        self.body = body
    }
}
