import Foundation

/// The masked client frames a WebSocket run sends (RFC 6455 §5.2, §5.3): one frame per message, FIN
/// set, opcode ``opcode`` (binary, text, or ping for the idle heartbeats), the minimal length
/// encoding (7, 16 or 64 bits), a masking key per ring slot, and the payload of the same slot of
/// ``payloads`` masked with it. Slot `k` here carries the payload of slot `k` there, so a connection's
/// frame `n` is ring slot ``FramePattern/slot(of:connection:)`` of both, consecutive frames are
/// contiguous (a batch goes out as one `Data` slice) and the echo is checked against ``payloads``.
///
/// The masking keys come from a fixed xorshift sequence, not from a strong random source: a benchmark's
/// frames are built once and reused (a server cannot tell, §10.3's concern is proxies on the path).
/// Immutable after `init`; readable from any thread.
final class WebSocketFramePattern: Sendable {
    /// Text (0x1), binary (0x2) and ping (0x9), the opcodes a run sends (RFC 6455 §5.2).
    static let textOpcode: UInt8 = 0x1, binaryOpcode: UInt8 = 0x2, pingOpcode: UInt8 = 0x9

    /// The payloads (their LP4 length fields are not sent).
    let payloads: FramePattern
    /// The opcode of every frame.
    let opcode: UInt8
    /// Bytes per frame on the wire: header (2, 4 or 10 bytes), masking key (4), payload.
    let frameSize: Int
    /// The ring of ``FramePattern/slotCount`` frames back to back.
    let ring: Data

    /// - Parameters:
    ///   - payloads: the payloads, one per slot (ping payloads must be at most 125 bytes, §5.5).
    ///   - opcode: ``textOpcode`` (the payloads must then be UTF-8), ``binaryOpcode`` or ``pingOpcode``.
    init(payloads: FramePattern, opcode: UInt8) {
        self.payloads = payloads
        self.opcode = opcode
        let size = payloads.payloadSize
        let header = Self.header(opcode: opcode, payloadLength: size, masked: true)
        frameSize = header.count + size
        var bytes = Data(capacity: payloads.slotCount * frameSize)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for slot in 0..<payloads.slotCount {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let key = withUnsafeBytes(of: UInt32(truncatingIfNeeded: state >> 16)) { Array($0) }
            bytes.append(contentsOf: header.dropLast(4))
            bytes.append(contentsOf: key)
            let start = slot * payloads.frameSize + 4
            let payload = payloads.ring[start..<start + size]
            bytes.append(contentsOf: payload.enumerated().map { index, byte in byte ^ key[index & 3] })
        }
        ring = bytes
    }

    /// A frame header (RFC 6455 §5.2): FIN, `opcode`, the mask bit and the minimal length encoding,
    /// followed by 4 zero bytes for the masking key when `masked`.
    static func header(opcode: UInt8, payloadLength: Int, masked: Bool) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        switch payloadLength {
        case 0...125: bytes.append(mask | UInt8(payloadLength))
        case 126...0xFFFF: bytes += [mask | 126, UInt8(payloadLength >> 8), UInt8(payloadLength & 0xFF)]
        default: bytes += [mask | 127] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: payloadLength >> ($0 * 8)) }
        }
        return masked ? bytes + [0, 0, 0, 0] : bytes
    }

    /// The bytes of frames `first ..< first + count` of `connection` lying contiguously in the ring from
    /// frame `first` on: at least one frame, at most `count`, never past the ring's end.
    func frames(from first: UInt64, count: Int, connection: Int) -> (data: Data, frames: Int) {
        let start = payloads.slot(of: first, connection: connection)
        let frames = min(count, payloads.slotCount - start)
        return (ring[start * frameSize..<(start + frames) * frameSize], frames)
    }

    /// A masked frame of `opcode` carrying `payload` (a Pong answering a server's Ping, a corpus
    /// message), with a fresh random masking key; RSV1 set when `compressed` (RFC 7692 §6).
    static func maskedFrame(opcode: UInt8, payload: [UInt8], compressed: Bool = false) -> Data {
        let key = (0..<4).map { _ in UInt8.random(in: 0...255) }
        var bytes = header(opcode: opcode, payloadLength: payload.count, masked: true).dropLast(4) + key
        if compressed { bytes[bytes.startIndex] |= 0x40 }
        bytes += payload.enumerated().map { index, byte in byte ^ key[index & 3] }
        return Data(bytes)
    }
}
