/// The 4-byte masking key of a WebSocket frame (RFC 6455 §5.3): the payload's byte `i` travels XORed with
/// key byte `i % 4`.
///
/// `rawValue` is the 4 bytes as they travel, read in network byte order (big-endian): the key of the
/// bytes `37 fa 21 3d` is `0x37FA_213D`.
public struct WebSocketMaskingKey: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 4 key bytes as a big-endian integer: the first byte on the wire is the most significant.
    public let rawValue: UInt32

    /// The key whose bytes on the wire, read in network byte order, are `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The key whose 4 bytes on the wire are `b0 b1 b2 b3`, in that order.
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        rawValue = UInt32(b0) << 24 | UInt32(b1) << 16 | UInt32(b2) << 8 | UInt32(b3)
    }

    /// A fresh key from `generator`: RFC 6455 §5.3 asks for one per frame, not predictable by the page
    /// that sends the data, so use a cryptographically strong generator outside tests.
    public static func random(using generator: inout some RandomNumberGenerator) -> WebSocketMaskingKey {
        WebSocketMaskingKey(rawValue: UInt32(truncatingIfNeeded: generator.next()))
    }

    /// The 4 key bytes in the order they travel.
    public var bytes: [UInt8] { [0, 1, 2, 3].map { byte($0) } }

    /// Key byte `index` (0–3) in wire order.
    func byte(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * UInt32(index & 3))) }

    /// The key's bytes in hexadecimal, in wire order, e.g. "37 fa 21 3d".
    public var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }

    /// XORs `bytes` with the key in place, byte `i` of `bytes` with key byte `(i + offset) % 4`: masks and
    /// unmasks alike (RFC 6455 §5.3). Works 32 bytes at a time, then 8, then byte by byte for the tail.
    ///
    /// - Parameters:
    ///   - bytes: the payload bytes to mask or unmask, changed in place.
    ///   - offset: how many payload bytes came before `bytes` (for a payload masked in pieces); default 0.
    public func apply(to bytes: UnsafeMutableRawBufferPointer, offset: Int = 0) {
        apply(from: UnsafeRawBufferPointer(bytes), to: bytes.baseAddress, offset: offset)
    }

    /// Writes `source` XORed with the key to `destination` (room for `source.count` bytes; it may be
    /// `source` itself), byte `i` with key byte `(i + offset) % 4`: unmasking while copying, one pass
    /// over the bytes instead of a copy and then ``apply(to:offset:)``.
    package func apply(from source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer?, offset: Int = 0) {
        guard let base = source.baseAddress, let target = destination, !source.isEmpty else { return }
        // The key repeated twice, rotated to start at `offset`, laid out in memory as on the wire, so the
        // 8-byte XOR is right whatever the machine's byte order: `rawValue` is the wire order read
        // big-endian, so rotating it left by whole bytes starts it at `offset`, and `.bigEndian` lays it
        // out in memory in wire order; both halves of `wide` are that same word.
        let shift = UInt32(8 * (offset & 3))
        let rotated = shift == 0 ? rawValue : rawValue << shift | rawValue >> (32 - shift)
        let inWireOrder = UInt64(rotated.bigEndian)
        let wide = inWireOrder | inWireOrder << 32
        let count = source.count
        var index = 0
        while index + 32 <= count {
            for word in stride(from: index, to: index + 32, by: 8) {
                target.storeBytes(of: base.loadUnaligned(fromByteOffset: word, as: UInt64.self) ^ wide, toByteOffset: word, as: UInt64.self)
            }
            index += 32
        }
        while index + 8 <= count {
            target.storeBytes(of: base.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wide, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            target.storeBytes(of: source[index] ^ byte(index + offset), toByteOffset: index, as: UInt8.self)
            index += 1
        }
    }
}
