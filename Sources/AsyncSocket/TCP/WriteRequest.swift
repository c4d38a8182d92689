import Foundation

/// One queued write: its bytes, how many are sent, its timeout and its tag (`GCDAsyncWritePacket`).
struct WriteRequest {
    /// Where the bytes are.
    enum Bytes {
        /// In a `Data` of the caller's.
        case data(Data)
        /// Copied into the socket's staging buffer (``TCPSocket/write(copying:withTimeout:tag:)``): the
        /// next `count` staged bytes after those of the staged writes queued before it.
        case staged(count: Int)
    }

    private(set) var bytes: Bytes
    /// Seconds; negative means no timeout.
    let timeout: Double
    let tag: Int
    /// Whether the delegate hears of the write (its completion, progress and rejection): false for a
    /// layer's own writes (``TCPSocket/write(copying:_:)``).
    var reports = true
    /// Identifies the request to its timeout timer; assigned when queued.
    var id: UInt64 = 0
    /// Bytes already sent.
    var sent = 0
    /// Seconds of timeout extensions granted so far.
    var extensions: Double = 0

    /// The write's length in bytes.
    var count: Int {
        switch bytes {
        case .data(let data): return data.count
        case .staged(let count): return count
        }
    }

    var remaining: Int { count - sent }

    /// Takes `count` more staged bytes, queued right after this write's, into this write, when it is an
    /// unreported staged write with no timeout (a layer's frames, one after another: one request for a
    /// whole burst); false, changing nothing, for any other write.
    mutating func absorbStaged(_ count: Int) -> Bool {
        guard !reports, timeout < 0, case .staged(let staged) = bytes else { return false }
        bytes = .staged(count: staged + count)
        return true
    }

    var isStaged: Bool {
        if case .staged = bytes { return true }
        return false
    }
}
