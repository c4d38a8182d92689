import Foundation

/// Received bytes waiting to be decoded: a growable byte buffer with a reader index.
///
/// Bytes are appended at the back and consumed from the front. Appending is amortised O(1) per byte.
/// Consumed bytes are reclaimed by compaction when at least half of the storage has been consumed, so each
/// byte is moved at most once more than it was appended: the total work is linear in the bytes appended,
/// never quadratic.
///
/// All offsets and counts are in bytes. Offsets passed to the `get…` methods count from the reader index,
/// i.e. from the first readable byte; the `get…` methods never consume anything.
public struct FrameBuffer: @unchecked Sendable {
    /// Appended bytes; `storage[readerIndex...]` are the readable ones.
    private var storage: [UInt8] = []
    private var readerIndex = 0
    /// Bytes owned by someone else that this buffer reads in place (a socket's unread bytes), only
    /// within ``borrowing(_:_:)``; `storage` is then empty and unused. Unchecked Sendable: a borrowing
    /// buffer never leaves the call that made it.
    private var borrowed: UnsafeRawBufferPointer?

    /// Creates an empty buffer.
    public init() {}

    /// The number of bytes appended and not yet consumed.
    public var readableBytes: Int { (borrowed?.count ?? storage.count) - readerIndex }

    /// The number of bytes held in storage, consumed ones not yet reclaimed included (for tests).
    var storedBytes: Int { borrowed?.count ?? storage.count }

    /// Runs `body` with a buffer that reads `bytes` in place, without copying them: how a socket lets a
    /// decoder look at its unread bytes. Nothing may be appended to it, and it must not outlive `body`.
    /// Returns `body`'s result and how many bytes the decoder consumed.
    package static func borrowing<R, E: Error>(
        _ bytes: UnsafeRawBufferPointer, _ body: (inout FrameBuffer) throws(E) -> R
    ) throws(E) -> (result: R, consumed: Int) {
        var buffer = FrameBuffer()
        buffer.borrowed = bytes
        let result = try body(&buffer)
        return (result, buffer.readerIndex)
    }

    /// Appends a copy of `bytes` after the readable bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        precondition(borrowed == nil, "a borrowing FrameBuffer cannot grow")
        reclaimConsumedBytes()
        storage.append(contentsOf: bytes)
    }

    /// Appends a copy of `data` after the readable bytes.
    public mutating func append(_ data: Data) {
        precondition(borrowed == nil, "a borrowing FrameBuffer cannot grow")
        reclaimConsumedBytes()
        storage.append(contentsOf: data)
    }

    /// Appends `bytes` after the readable bytes.
    public mutating func append(contentsOf bytes: [UInt8]) {
        precondition(borrowed == nil, "a borrowing FrameBuffer cannot grow")
        reclaimConsumedBytes()
        storage.append(contentsOf: bytes)
    }

    /// Consumes `count` bytes and returns them, or returns nil and consumes nothing when fewer than `count`
    /// bytes are readable (or `count` is negative).
    public mutating func readData(count: Int) -> Data? {
        guard count >= 0, count <= readableBytes else { return nil }
        let data = withUnsafeReadableBytes { Data(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        readerIndex += count
        return data
    }

    /// Consumes `count` bytes without looking at them.
    ///
    /// - Precondition: `0 <= count <= readableBytes`.
    public mutating func moveReaderIndex(forwardBy count: Int) {
        precondition(count >= 0 && count <= readableBytes, "cannot consume \(count) of \(readableBytes) bytes")
        readerIndex += count
    }

    /// Calls `body` with the readable bytes, without consuming them. The pointer is valid only during `body`.
    public func withUnsafeReadableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let borrowed { return try body(UnsafeRawBufferPointer(rebasing: borrowed[readerIndex...])) }
        return try storage.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[readerIndex...]))
        }
    }

    /// Returns the integer stored in the `MemoryLayout<T>.size` bytes at `offset` from the reader index, or
    /// nil when those bytes are not all readable yet (or `offset` is negative). Consumes nothing.
    public func getInteger<T: FixedWidthInteger>(
        at offset: Int, as type: T.Type = T.self, byteOrder: ByteOrder = .bigEndian
    ) -> T? {
        let byteCount = MemoryLayout<T>.size
        guard offset >= 0, offset <= readableBytes - byteCount else { return nil }
        var value: T = 0
        let start = readerIndex + offset
        for index in 0..<byteCount {
            let byteIndex = byteOrder == .bigEndian ? start + index : start + byteCount - 1 - index
            value = value << 8 | T(truncatingIfNeeded: byte(at: byteIndex))
        }
        return value
    }

    /// Returns the unsigned integer stored in the `byteCount` bytes at `offset` from the reader index (for
    /// widths such as Netty's 3-byte "medium"), or nil when those bytes are not all readable yet (or
    /// `offset` is negative). Consumes nothing.
    ///
    /// - Precondition: `1 <= byteCount <= 8`.
    public func getUnsignedInteger(at offset: Int, byteCount: Int, byteOrder: ByteOrder = .bigEndian) -> UInt64? {
        precondition((1...8).contains(byteCount), "an unsigned integer field is 1 to 8 bytes, not \(byteCount)")
        guard offset >= 0, offset <= readableBytes - byteCount else { return nil }
        var value: UInt64 = 0
        let start = readerIndex + offset
        for index in 0..<byteCount {
            let byteIndex = byteOrder == .bigEndian ? start + index : start + byteCount - 1 - index
            value = value << 8 | UInt64(byte(at: byteIndex))
        }
        return value
    }

    /// Drops consumed bytes once they are at least half the storage: the bytes moved never outnumber the
    /// bytes consumed since the last compaction, which keeps the total work linear.
    /// The byte at `index` of the whole storage (not relative to the reader index).
    @inline(__always)
    private func byte(at index: Int) -> UInt8 {
        if let borrowed { return borrowed[index] }
        return storage[index]
    }

    private mutating func reclaimConsumedBytes() {
        guard readerIndex > 0, readerIndex >= storage.count - readerIndex else { return }
        storage.removeSubrange(0..<readerIndex)
        readerIndex = 0
    }
}
