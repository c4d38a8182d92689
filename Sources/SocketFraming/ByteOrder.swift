/// The order in which the bytes of a multi-byte integer travel.
public enum ByteOrder: Sendable {
    /// Most significant byte first: network byte order, the default of every codec here (RFC 1700).
    case bigEndian
    /// Least significant byte first: the host order of x86 and ARM.
    case littleEndian
}
