/// A token bucket: up to `burst` events at once, then `rate` per second on average. A pure value with
/// no clock of its own: every call is given the time (nanoseconds of any monotonic clock, such as
/// `EventLoop.now()`), so it is tested in virtual time and costs nothing between events.
///
/// It is computed as the equivalent "generic cell rate algorithm" (GCRA, ITU-T I.371's virtual
/// scheduling), in whole nanoseconds: one number, the theoretical arrival time of the next event,
/// instead of a fractional token count, so the decisions are exact. With `rate` 2 and `burst` 3:
///
/// ```
/// time (s)   0    0    0    0      0.499  0.5    1.0   …
/// take       ok   ok   ok   wait   wait   ok     ok
///                           0.5 s  1 ms
/// ```
public struct TokenBucket: Sendable, Equatable {
    /// What ``take(at:)`` decided.
    public enum Decision: Sendable, Equatable {
        /// The event may go ahead; one token was taken.
        case allowed
        /// No token: the next one comes after `retryAfter`. Nothing was taken.
        case refused(retryAfter: Duration)
    }

    /// Events per second on average, once the burst is spent. Greater than 0.
    public let rate: Double
    /// The most events allowed at once (the bucket's size, full at the start). At least 1.
    public let burst: Int
    /// Nanoseconds per token: 1 s / rate, rounded, at least 1.
    private let interval: UInt64
    /// How far ahead of the present the next event may be scheduled: (burst − 1) × interval.
    private let tolerance: UInt64
    /// When the next event would be due if events came exactly at the rate (0: never used yet).
    /// When (ns, the caller's clock) the bucket is due to be empty of the tokens taken so far: the
    /// bucket's whole changing state; the rest is its rate and burst. Within the package, so that a
    /// caller holding many buckets of one rate and burst keeps only this per bucket (the chat server's
    /// connections: ChatServer's `Router.Pace`).
    package var theoreticalArrival: UInt64 = 0

    /// A full bucket of `burst` tokens refilling at `rate` per second.
    /// - Precondition: `rate > 0` and finite; `burst >= 1` (programmer errors, not network input).
    public init(rate: Double, burst: Int) {
        precondition(rate > 0 && rate.isFinite, "a token bucket's rate must be positive, not \(rate)")
        precondition(burst >= 1, "a token bucket's burst must be at least 1, not \(burst)")
        self.rate = rate
        self.burst = burst
        let nanoseconds = (1e9 / rate).rounded()
        interval = nanoseconds >= 1.8e19 ? .max : max(1, UInt64(nanoseconds))
        let (product, overflow) = UInt64(burst - 1).multipliedReportingOverflow(by: interval)
        tolerance = overflow ? .max : product
    }

    /// Takes a token at `now` (nanoseconds) if there is one.
    public mutating func take(at now: UInt64) -> Decision {
        let due = max(theoreticalArrival, now)
        let ahead = due - now
        guard ahead <= tolerance else {
            return .refused(retryAfter: .nanoseconds(Int64(clamping: ahead - tolerance)))
        }
        let (next, overflow) = due.addingReportingOverflow(interval)
        theoreticalArrival = overflow ? .max : next
        return .allowed
    }
}
