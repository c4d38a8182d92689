/// Bytes received on one connection and not yet handed to a read. Empty (and holding no memory beyond
/// a small retained capacity) whenever every received byte has been delivered, which is the usual state
/// of an idle connection.
struct ReadBuffer {
    private var bytes: [UInt8] = []
    private var readerIndex = 0

    /// Capacity kept after the buffer empties, in bytes; larger storage is released.
    static let retainedCapacity = 4096

    /// Bytes waiting to be read.
    var count: Int { bytes.count - readerIndex }
    var isEmpty: Bool { readerIndex == bytes.count }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        if readerIndex > 0 && readerIndex >= bytes.count / 2 {
            bytes.removeFirst(readerIndex)
            readerIndex = 0
        }
        bytes.append(contentsOf: chunk)
    }

    /// Drops the first `count` bytes.
    mutating func consume(_ count: Int) {
        readerIndex += count
        if readerIndex == bytes.count { reset() }
    }

    mutating func reset() {
        readerIndex = 0
        bytes.removeAll(keepingCapacity: bytes.capacity <= ReadBuffer.retainedCapacity)
    }

    /// Calls `body` with the unread bytes.
    func withUnsafeReadableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[readerIndex...])) }
    }
}
