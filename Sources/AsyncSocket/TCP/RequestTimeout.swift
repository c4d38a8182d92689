/// The timeout timer of the current read or write: started when a request with a timeout becomes the
/// current one, cancelled when it completes or the connection closes. Loop thread only.
struct RequestTimeout {
    private var timer: Scheduled?
    private var requestID: UInt64 = 0

    /// Makes the timer follow the current request `id` (nil = none). Calls `start` only when that request
    /// is new and has a `timeout` (seconds, negative = none), so an unchanged head costs nothing.
    mutating func follow(_ id: UInt64?, timeout: Double, start: () -> Scheduled) {
        guard let id else {
            cancel()
            return
        }
        guard id != requestID else { return }
        cancel()
        requestID = id
        if timeout >= 0 { timer = start() }
    }

    /// Starts a new timer for the same request, after the delegate extended its timeout.
    mutating func restart(_ start: () -> Scheduled) {
        timer?.cancel()
        timer = start()
    }

    mutating func cancel() {
        timer?.cancel()
        timer = nil
        requestID = 0
    }
}
