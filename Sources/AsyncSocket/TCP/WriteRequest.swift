import Foundation

/// One queued write: its bytes, how many are sent, its timeout and its tag (`GCDAsyncWritePacket`).
struct WriteRequest {
    let data: Data
    /// Seconds; negative means no timeout.
    let timeout: Double
    let tag: Int
    /// Identifies the request to its timeout timer; assigned when queued.
    var id: UInt64 = 0
    /// Bytes of `data` already sent.
    var sent = 0
    /// Seconds of timeout extensions granted so far.
    var extensions: Double = 0

    var remaining: Int { data.count - sent }
}
