/// When to try again after a connection dropped that nobody asked to drop (MISSION M5, article 000):
/// first at once, then after 2 s, then after 4 s more; after the third failure, give up and say the
/// server is unavailable. A success starts the schedule over.
///
/// ```
/// drop ─▶ attempt 1 (0 s) ✗ ─▶ attempt 2 (+2 s) ✗ ─▶ attempt 3 (+4 s) ✗ ─▶ "server unavailable"
/// ```
public struct ReconnectSchedule: Sendable, Equatable {
    /// The delay before each attempt, in order; their count is the number of attempts.
    public let delays: [Duration]
    /// Attempts handed out since the last ``reset()``.
    public private(set) var attempts = 0

    /// The articles' schedule: 0 s, 2 s, 4 s.
    public static let articleDelays: [Duration] = [.zero, .seconds(2), .seconds(4)]

    /// A schedule with `delays` before attempt 1, 2, … (default ``articleDelays``).
    public init(delays: [Duration] = ReconnectSchedule.articleDelays) {
        self.delays = delays
    }

    /// The next attempt's number (from 1) and the delay before it, or `nil` when every attempt has been
    /// used and the server should be reported unavailable.
    public mutating func next() -> (attempt: Int, delay: Duration)? {
        guard attempts < delays.count else { return nil }
        attempts += 1
        return (attempts, delays[attempts - 1])
    }

    /// Starts over, after a successful connection.
    public mutating func reset() { attempts = 0 }
}
