#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

extension FrameBuffer {
    /// Returns a copy of the `count` bytes at `offset` from the reader index, or nil when those bytes are
    /// not all readable yet (or `offset` or `count` is negative). Consumes nothing.
    public func getData(at offset: Int, count: Int) -> Data? {
        guard offset >= 0, count >= 0, offset <= readableBytes - count else { return nil }
        return withUnsafeReadableBytes { Data(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
    }

    /// Returns the offset from the reader index of the first complete occurrence of `needle` that starts
    /// at or after `offset` and before `startLimit` (by default: anywhere), or nil when there is none.
    /// Consumes nothing.
    ///
    /// Only the bytes from `offset` to the end of the readable bytes are examined, each at most a few
    /// times, so a decoder that remembers how far it searched never pays twice for the same bytes. Runs
    /// `memchr(3)` for the first byte of `needle`, then `memcmp(3)` for the rest.
    ///
    /// - Precondition: `needle` is not empty.
    public func firstIndex(of needle: [UInt8], from offset: Int, startLimit: Int = .max) -> Int? {
        precondition(!needle.isEmpty, "cannot search for an empty byte sequence")
        let first = Int32(needle[0])
        return withUnsafeReadableBytes { bytes -> Int? in
            guard let base = bytes.baseAddress else { return nil }
            // The last start that leaves room for the whole needle, and the limit the caller gave.
            let lastStart = min(bytes.count - needle.count, startLimit - 1)
            var start = max(offset, 0)
            return needle.withUnsafeBytes { needleBytes -> Int? in
                guard let needleBase = needleBytes.baseAddress else { return nil }
                while start <= lastStart {
                    guard let found = memchr(base + start, first, lastStart - start + 1) else { return nil }
                    let index = base.distance(to: UnsafeRawPointer(found))
                    if needle.count == 1 || memcmp(base + index + 1, needleBase + 1, needle.count - 1) == 0 {
                        return index
                    }
                    start = index + 1
                }
                return nil
            }
        }
    }

    /// Whether the readable bytes from `offset` to their end, fewer than `needle.count`, are the start of
    /// `needle`: an occurrence that may complete when more bytes arrive. Consumes nothing.
    func endsWithPartialMatch(of needle: [UInt8], at offset: Int) -> Bool {
        withUnsafeReadableBytes { bytes in
            let tail = bytes.count - offset
            guard offset >= 0, tail > 0, tail < needle.count else { return false }
            for index in 0..<tail where bytes[offset + index] != needle[index] { return false }
            return true
        }
    }
}
