/// When to try again after a connection dropped that nobody asked to drop (MISSION M5, article 000):
/// by default first at once, then after 2 s, then after 4 s more, each delay stretched by a random
/// jitter of up to 1 s; after the third failure, give up and say the server is unavailable.
///
/// ```
/// drop ─▶ attempt 1 (0 s + j₁) ✗ ─▶ attempt 2 (2 s + j₂) ✗ ─▶ attempt 3 (4 s + j₃) ✗ ─▶ "server unavailable"
///                                       j₁, j₂, j₃ each uniformly random in [0 s, 1 s)
/// ```
///
/// **Jitter.** Each attempt's base delay `d` (from ``growth``) becomes `d + jitter × r`, where `r` is
/// drawn from ``random`` in [0, 1): uniformly random in [`d`, `d + jitter`). The default ``jitter`` is
/// ``defaultJitter`` (1 s), so the articles' 0 s, 2 s, 4 s become [0 s, 1 s), [2 s, 3 s), [4 s, 5 s):
/// clients dropped together by a server restart spread their attempts over a second instead of all
/// knocking at the same instant. A jitter of zero gives the exact base delays.
///
/// **Growth.** Either a fixed list of base delays (``Growth/fixed(_:)``, the articles' shape) or
/// exponential (``Growth/exponential(base:factor:cap:attempts:)``: `base`, `base × factor`,
/// `base × factor²`, …, never more than `cap`).
///
/// **After the attempts.** ``policy`` says what follows the last of ``growth``'s attempts:
/// ``ReconnectPolicy/giveUp`` (the default and the articles' behaviour: ``next()`` returns `nil`) or
/// ``ReconnectPolicy/keepTrying(cap:)``: attempts go on forever, each base delay twice the one before
/// (starting from the last base delay of ``growth``, or 1 s if that was shorter), never more than
/// `cap` (default 60 s), each plus the jitter:
///
/// ```
/// keepTrying(cap: 60 s), articles' growth:  0  2  4 │ 8  16  32  60  60  60 …   (s, each + jitter)
///                                           growth  │ continued: ×2, capped
/// ```
///
/// **Starting over.** ``reset()`` starts the attempts over. ``LongLinkClient`` calls it only once a
/// connection has proven healthy (``LongLinkClient/Configuration/linkHealthyAfter``), so a server that
/// accepts and at once closes walks the client through the schedule to "server unavailable" instead
/// of being reconnected to at once, forever.
///
/// A value type with no threads of its own: ``next()`` calls ``random`` on the caller's thread (for
/// ``LongLinkClient``, its event loop).
public struct ReconnectSchedule: Sendable {
    /// How the base delays (before jitter) grow from one attempt to the next.
    public enum Growth: Sendable, Equatable {
        /// The delay before each attempt, in order; their count is the number of attempts.
        case fixed([Duration])
        /// `attempts` attempts; attempt `n` (from 1) waits `base × factor^(n−1)`, at most `cap`.
        /// `base` and `cap` are durations (`cap` ≥ `base` ≥ 0), `factor` ≥ 1.
        case exponential(base: Duration, factor: Double, cap: Duration, attempts: Int)
    }

    /// How the base delays grow. Default ``Growth/fixed(_:)`` with ``articleDelays``.
    public var growth: Growth
    /// The most a delay is stretched: each delay `d` becomes uniformly random in [`d`, `d + jitter`).
    /// Default ``defaultJitter`` (1 s); `.zero` turns jitter off. Must not be negative.
    public var jitter: Duration
    /// Returns a number in [0, 1) that picks the point within the jitter (0: no extra delay), called
    /// once per attempt by ``next()`` on the caller's thread. Default ``systemRandom``; tests inject
    /// fixed values to get exact delays. Values outside [0, 1) are clamped into it.
    public var random: @Sendable () -> Double
    /// What follows the last attempt of ``growth``. Default ``ReconnectPolicy/giveUp``.
    /// (``LongLinkClient`` sets it from ``LongLinkClient/Configuration/reconnectPolicy``.)
    public var policy: ReconnectPolicy = .giveUp
    /// Attempts handed out since the last ``reset()``.
    public private(set) var attempts = 0

    /// The articles' base delays: 0 s, 2 s, 4 s.
    public static let articleDelays: [Duration] = [.zero, .seconds(2), .seconds(4)]
    /// The default ``jitter``: 1 s.
    public static let defaultJitter: Duration = .seconds(1)
    /// The default ``random``: the system's generator, uniform in [0, 1).
    public static let systemRandom: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// A schedule with fixed base delays `delays` before attempt 1, 2, … (default ``articleDelays``),
    /// each stretched by up to `jitter` (default 1 s) as drawn by `random`.
    public init(
        delays: [Duration] = ReconnectSchedule.articleDelays,
        jitter: Duration = ReconnectSchedule.defaultJitter,
        random: @escaping @Sendable () -> Double = ReconnectSchedule.systemRandom
    ) {
        self.init(growth: .fixed(delays), jitter: jitter, random: random)
    }

    /// A schedule whose base delays grow as `growth` says, each stretched by up to `jitter` (default
    /// 1 s) as drawn by `random`.
    public init(
        growth: Growth,
        jitter: Duration = ReconnectSchedule.defaultJitter,
        random: @escaping @Sendable () -> Double = ReconnectSchedule.systemRandom
    ) {
        precondition(jitter >= .zero, "negative reconnect jitter \(jitter)")
        if case .exponential(let base, let factor, let cap, let attempts) = growth {
            precondition(
                base >= .zero && cap >= base && factor >= 1 && attempts >= 0,
                "exponential reconnect schedule needs cap ≥ base ≥ 0, factor ≥ 1, attempts ≥ 0")
        }
        self.growth = growth
        self.jitter = jitter
        self.random = random
    }

    /// An exponential schedule: `attempts` attempts, attempt `n` (from 1) waiting `base × factor^(n−1)`
    /// but at most `cap`, each stretched by up to `jitter` (default 1 s). For example base 1 s,
    /// factor 2, cap 30 s, 7 attempts: 1, 2, 4, 8, 16, 30, 30 s, plus jitter.
    public static func exponential(
        base: Duration, factor: Double = 2, cap: Duration, attempts: Int,
        jitter: Duration = ReconnectSchedule.defaultJitter,
        random: @escaping @Sendable () -> Double = ReconnectSchedule.systemRandom
    ) -> ReconnectSchedule {
        ReconnectSchedule(
            growth: .exponential(base: base, factor: factor, cap: cap, attempts: attempts),
            jitter: jitter, random: random)
    }

    /// How many attempts ``growth`` makes before the server counts as unavailable (with
    /// ``ReconnectPolicy/keepTrying(cap:)``, the attempts after them continue the schedule).
    public var maxAttempts: Int {
        switch growth {
        case .fixed(let delays): return delays.count
        case .exponential(_, _, _, let attempts): return attempts
        }
    }

    /// The base delay (before jitter) of every attempt of ``growth``, in order.
    public var delays: [Duration] { (0..<maxAttempts).compactMap { growthDelay(ofAttempt: $0 + 1) } }

    /// True when every attempt of ``growth`` has been handed out and none after it: the one moment to
    /// report the server unavailable (with ``ReconnectPolicy/keepTrying(cap:)`` the attempts go on, and
    /// this is false again after the next ``next()``; with ``ReconnectPolicy/giveUp`` ``next()`` returns
    /// `nil` from here on).
    public var shouldReportUnavailable: Bool { attempts == maxAttempts }

    /// The base delay (before jitter) of attempt `attempt` (from 1), or `nil` when there is no such
    /// attempt (below 1, or beyond ``maxAttempts`` with ``ReconnectPolicy/giveUp``).
    public func baseDelay(ofAttempt attempt: Int) -> Duration? {
        guard attempt > maxAttempts else { return growthDelay(ofAttempt: attempt) }
        guard case .keepTrying(let cap) = policy else { return nil }
        // Doubling from the last base delay of the growth (at least 1 s), capped.
        let last = maxAttempts > 0 ? growthDelay(ofAttempt: maxAttempts) ?? .zero : .zero
        let capNanoseconds = max(cap.nanoseconds, 0)
        var nanoseconds = max(last.nanoseconds, 1_000_000_000)
        for _ in 0..<(attempt - maxAttempts) {
            if nanoseconds >= capNanoseconds - nanoseconds { return .nanoseconds(capNanoseconds) }
            nanoseconds *= 2
        }
        return .nanoseconds(min(nanoseconds, capNanoseconds))
    }

    /// The base delay of attempt `attempt` (from 1) of ``growth``, or `nil` outside 1...``maxAttempts``.
    private func growthDelay(ofAttempt attempt: Int) -> Duration? {
        guard attempt >= 1, attempt <= maxAttempts else { return nil }
        switch growth {
        case .fixed(let delays):
            return delays[attempt - 1]
        case .exponential(let base, let factor, let cap, _):
            let capNanoseconds = Double(cap.nanoseconds)
            var nanoseconds = Double(base.nanoseconds)
            for _ in 1..<attempt {
                nanoseconds *= factor
                if nanoseconds >= capNanoseconds { return cap }
            }
            return nanoseconds >= capNanoseconds ? cap : .nanoseconds(Int64(nanoseconds))
        }
    }

    /// The next attempt's number (from 1) and the delay before it (base delay plus jitter), or `nil`
    /// when every attempt has been used (``ReconnectPolicy/giveUp``) and the server should be reported
    /// unavailable. With ``ReconnectPolicy/keepTrying(cap:)`` it never returns `nil`; check
    /// ``shouldReportUnavailable`` before calling it to know when the growth's attempts have run out.
    public mutating func next() -> (attempt: Int, delay: Duration)? {
        guard let base = baseDelay(ofAttempt: attempts + 1) else { return nil }
        attempts += 1
        return (attempts, base + jitterOffset())
    }

    /// Starts over, after a connection proved healthy.
    public mutating func reset() { attempts = 0 }

    /// A point in [0, ``jitter``), whole nanoseconds.
    private func jitterOffset() -> Duration {
        let spread = jitter.nanoseconds
        guard spread > 0 else { return .zero }
        let drawn = random()
        let fraction = drawn.isNaN ? 0 : min(max(drawn, 0), 1)
        let offset = min(Int64((Double(spread) * fraction).rounded(.down)), spread - 1)
        return .nanoseconds(offset)
    }
}

/// What a ``ReconnectSchedule`` does once its growth's attempts (by default the articles' three) have
/// failed.
public enum ReconnectPolicy: Sendable, Equatable {
    /// Stop: the server is unavailable until the app connects again (the articles' behaviour).
    case giveUp
    /// Keep trying forever: each further base delay twice the one before (from the growth's last, or
    /// 1 s if that was shorter), at most `cap` (default ``defaultCap``, 60 s), plus the schedule's jitter.
    case keepTrying(cap: Duration = ReconnectPolicy.defaultCap)

    /// The default cap of ``keepTrying(cap:)``: 60 s (issue 11: "capped delays (default cap 60 s)").
    public static let defaultCap: Duration = .seconds(60)
}

extension Duration {
    /// Whole nanoseconds, clamped to `Int64`'s range.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (whole < 0 ? .min : .max) : sum
    }
}
