/// Bytes received on one connection and not yet handed to a read. Empty (and holding no memory beyond
/// a small retained capacity) whenever every received byte has been delivered, which is the usual state
/// of an idle connection. Loop thread only.
struct ReadBuffer: ~Copyable {
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var readerIndex = 0
    private var writerIndex = 0
    /// The size of the storage last released by ``reset(keepingCapacity:)`` with `false`: the next
    /// storage starts at it, so a buffer emptied after every burst allocates once per burst rather than
    /// growing again from 256 bytes (four allocations for a 1 KiB burst).
    private var releasedCapacity = 0

    /// Capacity kept after the buffer empties, in bytes; larger storage is released.
    static let retainedCapacity = 4096

    /// Unread bytes above which a socket reads from the kernel straight into this buffer rather than
    /// through the loop's scratch buffer: a large frame is arriving, and reading in place saves a copy.
    static let readInPlaceThreshold = 4096

    /// The most bytes one in-place read may take when `unread` bytes are buffered: as many again as are
    /// buffered (at least ``readInPlaceThreshold``), at most `maximum` (the loop's scratch buffer, 256
    /// KiB). So the storage grows by doubling with what actually arrives: a peer that sends 4 KiB of a
    /// frame and then stalls leaves about 8 KiB allocated, not the 260 KiB that room for a whole
    /// scratch buffer's read reserved (issue 12: partial frames held by slow or silent peers).
    static func inPlaceReadLength(unread: Int, maximum: Int) -> Int {
        min(maximum, max(unread, readInPlaceThreshold))
    }

    deinit { storage.deallocate() }

    /// Bytes waiting to be read.
    var count: Int { writerIndex - readerIndex }
    /// Bytes of storage allocated (unread bytes, room after them, consumed bytes not yet moved).
    var capacity: Int { storage.count }
    var isEmpty: Bool { readerIndex == writerIndex }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        guard let source = chunk.baseAddress, chunk.count > 0 else { return }
        makeRoom(for: chunk.count)
        storage.baseAddress.unsafelyUnwrapped.advanced(by: writerIndex).copyMemory(from: source, byteCount: chunk.count)
        writerIndex += chunk.count
    }

    /// Appends `first` and then `second` (either may be empty), making room for both at once.
    mutating func append(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) {
        makeRoom(for: first.count + second.count)
        copyIn(first)
        copyIn(second)
    }

    /// Copies `chunk` after the unread bytes, in room already made.
    private mutating func copyIn(_ chunk: UnsafeRawBufferPointer) {
        guard let source = chunk.baseAddress, chunk.count > 0 else { return }
        storage.baseAddress.unsafelyUnwrapped.advanced(by: writerIndex).copyMemory(from: source, byteCount: chunk.count)
        writerIndex += chunk.count
    }

    /// Room for up to `maximum` bytes after the unread ones, for a `read(2)` straight into the buffer;
    /// ``didAppend(_:)`` then keeps what the read wrote. When the room left at the end holds at least a
    /// quarter of `maximum`, that room is all it gets, so the unread bytes are not moved for every read.
    mutating func room(upTo maximum: Int) -> UnsafeMutableRawBufferPointer {
        if storage.count - writerIndex < maximum / 4 { makeRoom(for: maximum) }
        return UnsafeMutableRawBufferPointer(rebasing: storage[writerIndex..<min(storage.count, writerIndex + maximum)])
    }

    /// Keeps `count` bytes written into ``room(upTo:)`` as unread bytes.
    mutating func didAppend(_ count: Int) {
        writerIndex += count
    }

    /// Drops the first `count` bytes.
    mutating func consume(_ count: Int) {
        readerIndex += count
        if readerIndex == writerIndex { reset() }
    }

    /// Forgets every byte; keeps storage of up to ``retainedCapacity`` bytes, or none with
    /// `keepingCapacity` false (for a buffer most connections need only now and then: an idle
    /// connection holds no memory for it).
    mutating func reset(keepingCapacity: Bool = true) {
        readerIndex = 0
        writerIndex = 0
        if !keepingCapacity || storage.count > ReadBuffer.retainedCapacity {
            if !keepingCapacity && storage.count > 0 { releasedCapacity = min(storage.count, 1 << 20) }
            storage.deallocate()
            storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }
    }

    /// Calls `body` with the unread bytes.
    func withUnsafeReadableBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[readerIndex..<writerIndex]))
    }

    /// Ensures room for `extra` more bytes after the unread ones: moves the unread bytes to the front
    /// when that makes room (each byte moves at most once per doubling), else grows the storage.
    private mutating func makeRoom(for extra: Int) {
        guard writerIndex + extra > storage.count else { return }
        let unread = count
        if readerIndex > 0 && unread + extra <= storage.count && readerIndex >= unread {
            if let base = storage.baseAddress { base.copyMemory(from: base.advanced(by: readerIndex), byteCount: unread) }
        } else {
            let capacity = max(unread + extra, storage.count * 2, releasedCapacity, 256)
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            if let base = storage.baseAddress, let target = grown.baseAddress {
                target.copyMemory(from: base.advanced(by: readerIndex), byteCount: unread)
            }
            storage.deallocate()
            storage = grown
        }
        readerIndex = 0
        writerIndex = unread
    }
}
