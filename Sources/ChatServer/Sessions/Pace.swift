import ChatProtocol
import LongLink

extension Router {
    /// Whether `message` counts against the connection's rate: everything a client sends except
    /// `received` acknowledgements, which the server's own deliveries bound (heartbeats never reach
    /// the router).
    static func countsAgainstRate(_ message: ChatMessage) -> Bool {
        if case .v2(.received) = message { return false }
        return true
    }

    /// One connection's message rate: a ``TokenBucket`` of ``ChatServer/Limits/messageRate`` per
    /// second with bursts of ``ChatServer/Limits/messageBurst``, and the refusals in a row. A value with
    /// no clock of its own: the router passes the time (monotonic nanoseconds), so tests drive it.
    ///
    /// It keeps the bucket's state only (its theoretical arrival time), not its rate and burst, which
    /// are the limits' and the same for every connection: 24 bytes, not 56, in each session's record
    /// (issue 35 §2: memory per chat user). ``check(_:at:limits:)`` makes the bucket of the limits
    /// around that state.
    struct Pace {
        /// The bucket's theoretical arrival time (``TokenBucket``'s state; 0: a full bucket).
        var arrival: UInt64 = 0
        /// Until when (clock ns) every message is refused once one was: so none is taken before an
        /// earlier one that was refused, and the order the client sent them in is the order stored.
        var refusingUntil: UInt64 = 0
        /// Messages refused since the last one taken.
        var refusedInARow = 0

        /// What ``check(_:at:limits:)`` decided.
        enum Verdict: Equatable {
            /// Taken.
            case within
            /// Refused: the client may send again after `retryAfter` whole seconds; `closes` when this
            /// is one refusal more than ``ChatServer/Limits/maxRefusedInARow`` in a row.
            case refused(retryAfter: UInt64, closes: Bool)
        }

        /// Whether `message`, arriving at `now` (ns), is within the rate. Messages that do not count
        /// (``Router/countsAgainstRate(_:)``) are always within it.
        mutating func check(_ message: ChatMessage, at now: UInt64, limits: ChatServer.Limits) -> Verdict {
            guard Router.countsAgainstRate(message) else { return .within }
            let wait: UInt64
            if now >= refusingUntil {
                var bucket = TokenBucket(rate: limits.messageRate, burst: limits.messageBurst)
                bucket.theoreticalArrival = arrival
                let decision = bucket.take(at: now)
                arrival = bucket.theoreticalArrival
                guard case .refused(let retryAfter) = decision else {
                    refusedInARow = 0
                    return .within
                }
                // Whole seconds on the wire, rounded up: after them the bucket has a token again.
                let seconds = max(1, (Router.nanoseconds(retryAfter) + 999_999_999) / 1_000_000_000)
                wait = seconds * 1_000_000_000
                refusingUntil = now &+ wait
            } else {
                wait = refusingUntil - now
            }
            refusedInARow += 1
            return .refused(retryAfter: max(1, (wait + 999_999_999) / 1_000_000_000), closes: refusedInARow > limits.maxRefusedInARow)
        }
    }
}
