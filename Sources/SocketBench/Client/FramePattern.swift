import Foundation

/// The LP4 frames a run sends, and the bytes each echo must match: a ring of ``slotCount`` whole frames
/// (4-byte big-endian length ``payloadSize``, then pseudo-random payload bytes) laid out back to back,
/// as `shared/bench/loadgen.c` builds them. Frame `k` of connection `c` is ring slot `(k + 97c) mod
/// slotCount`, so consecutive frames of one connection are contiguous (a batch goes out as one `Data`
/// slice, no copy) and a dropped, duplicated or reordered frame shows up as a mismatch.
///
/// Immutable after `init`; its bytes may be read from any thread for as long as it lives.
final class FramePattern: Sendable {
    /// Payload bytes per frame.
    let payloadSize: Int
    /// Bytes per frame: 4 + ``payloadSize``.
    let frameSize: Int
    /// Frames in the ring: 256 for small frames, halved until the ring fits in 1 MiB (at least 2).
    let slotCount: Int
    /// The whole ring; slices of it are what connections write.
    let ring: Data
    /// The address of ``ring``'s bytes (they never move: the `Data` owns this allocation).
    private nonisolated(unsafe) let base: UnsafeRawPointer

    /// - Parameters:
    ///   - payloadSize: bytes of payload per frame, 0 ... 16 MiB.
    ///   - printable: payload bytes in printable ASCII (0x20 ... 0x7E), valid UTF-8 for WebSocket text.
    init(payloadSize: Int, printable: Bool = false) {
        self.payloadSize = payloadSize
        frameSize = 4 + payloadSize
        var slots = 256
        while slots > 2 && slots * frameSize > 1 << 20 { slots /= 2 }
        slotCount = slots
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: slots * frameSize, alignment: 16)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15  // xorshift64, as loadgen
        let length = UInt32(truncatingIfNeeded: payloadSize).bigEndian
        for slot in 0..<slots {
            let start = slot * frameSize
            withUnsafeBytes(of: length) { bytes.baseAddress!.advanced(by: start).copyMemory(from: $0.baseAddress!, byteCount: 4) }
            for index in 0..<payloadSize {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let byte = UInt8(truncatingIfNeeded: state >> 32)
                bytes[start + 4 + index] = printable ? 0x20 + byte % 95 : byte
            }
        }
        base = UnsafeRawPointer(bytes.baseAddress!)
        ring = Data(bytesNoCopy: bytes.baseAddress!, count: bytes.count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// The ring slot of frame `sequence` of connection `connection`.
    func slot(of sequence: UInt64, connection: Int) -> Int {
        Int((sequence &+ UInt64(connection) &* 97) % UInt64(slotCount))
    }

    /// The bytes of frames `first ..< first + count` of `connection` that lie contiguously in the ring
    /// from frame `first` on: at least one frame, at most `count`, never past the ring's end.
    func frames(from first: UInt64, count: Int, connection: Int) -> (data: Data, frames: Int) {
        let start = slot(of: first, connection: connection)
        let frames = min(count, slotCount - start)
        return (ring[start * frameSize..<(start + frames) * frameSize], frames)
    }

    /// Whether `bytes` equal frame `sequence` of `connection` from byte `offset` of the frame on
    /// (`offset + bytes.count` ≤ ``frameSize``).
    func matches(_ bytes: UnsafeRawBufferPointer, sequence: UInt64, connection: Int, offset: Int) -> Bool {
        guard let pointer = bytes.baseAddress else { return true }
        let expected = base + slot(of: sequence, connection: connection) * frameSize + offset
        return memcmp(pointer, expected, bytes.count) == 0
    }
}
