/// The timeout timer of the current read or write: started when a request with a timeout becomes the
/// current one, cancelled when it completes or the connection closes. Loop thread only.
struct RequestTimeout {
    private var timer: Scheduled?
    private var requestID: UInt64 = 0
    /// When the running timer fires, in the loop's nanoseconds.
    private(set) var deadline: UInt64 = 0

    /// Makes the timer follow the current request `id` (nil = none). Calls `start` only when that request
    /// is new and has a `timeout` (seconds, negative = none), so an unchanged head costs nothing.
    mutating func follow(_ id: UInt64?, timeout: Double, start: () -> (Scheduled, deadline: UInt64)) {
        guard let id else {
            cancel()
            return
        }
        guard id != requestID else { return }
        cancel()
        requestID = id
        if timeout >= 0 { (timer, deadline) = start() }
    }

    /// Starts a new timer for the same request, after the delegate extended its timeout by `seconds`:
    /// it fires `seconds` after the previous deadline, so the request's total time is exactly its
    /// timeout plus its extensions, however long the delegate took to answer.
    mutating func extend(by seconds: Double, start: (_ deadline: UInt64) -> Scheduled) {
        timer?.cancel()
        deadline &+= Duration.seconds(seconds).nanosecondsClamped
        timer = start(deadline)
    }

    mutating func cancel() {
        timer?.cancel()
        timer = nil
        requestID = 0
    }
}
