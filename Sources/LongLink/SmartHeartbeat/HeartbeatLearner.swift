import Foundation

/// What a ``SmartHeartbeat`` has learned about one network, as a ``HeartbeatIntervalStore`` keeps it.
public struct LearnedHeartbeat: Sendable, Equatable, Codable {
    /// The interval heartbeats use on this network now, in milliseconds.
    public var intervalMilliseconds: Int64
    /// Whether probing is over (the interval settled) rather than still stepping up.
    public var isSettled: Bool
    /// Answered heartbeats in a row at this interval (while probing).
    public var successes: Int
    /// Failed heartbeats at this interval since the last answered one.
    public var failures: Int
    /// When this was last changed (for evicting the oldest networks).
    public var modified: Date

    /// Knowledge with the given figures (a new network: the minimum, probing, no counts).
    public init(interval: Duration, isSettled: Bool = false, successes: Int = 0, failures: Int = 0, modified: Date = Date()) {
        intervalMilliseconds = interval.milliseconds
        self.isSettled = isSettled
        self.successes = successes
        self.failures = failures
        self.modified = modified
    }

    /// ``intervalMilliseconds`` as a duration.
    public var interval: Duration {
        get { .milliseconds(intervalMilliseconds) }
        set { intervalMilliseconds = newValue.milliseconds }
    }
}

/// Mars's adaptive computation (see ``SmartHeartbeat``) for one network: what each heartbeat's
/// outcome does to the interval. Pure; the link's loop owns it.
struct HeartbeatLearner {
    let policy: SmartHeartbeat
    private(set) var learned: LearnedHeartbeat

    /// Starts from what a store kept (clamped into the policy's bounds) or, for a new network, the minimum.
    init(policy: SmartHeartbeat, learned: LearnedHeartbeat?) {
        self.policy = policy
        var learned = learned ?? LearnedHeartbeat(interval: policy.minimum)
        if learned.interval < policy.minimum { learned.interval = policy.minimum }
        if learned.interval > policy.maximum { learned.interval = policy.maximum - policy.margin }
        self.learned = learned
    }

    var interval: Duration { learned.interval }

    /// A heartbeat sent after `interval` idle was answered. Returns the change of interval, if any.
    mutating func succeeded(at interval: Duration) -> (from: Duration, reason: SmartHeartbeat.ChangeReason)? {
        guard interval == learned.interval else { return nil }  // the interval changed meanwhile
        learned.failures = 0
        guard !learned.isSettled else { return nil }
        if interval >= policy.maximum {
            return change(to: policy.maximum - policy.margin, settled: true, .reachedMaximum)
        }
        learned.successes += 1
        guard learned.successes >= policy.successesBeforeStep else { return nil }
        return change(to: min(interval + policy.step, policy.maximum), settled: false, .steppedUp)
    }

    /// A heartbeat sent after `interval` idle failed. Returns the change of interval, if any.
    mutating func failed(at interval: Duration) -> (from: Duration, reason: SmartHeartbeat.ChangeReason)? {
        guard interval == learned.interval, interval > policy.minimum else { return nil }
        learned.failures += 1
        learned.successes = 0
        guard learned.failures >= policy.failuresBeforeBackOff else { return nil }
        if learned.isSettled { return change(to: policy.minimum, settled: false, .restarted) }
        return change(to: max(interval - policy.step - policy.margin, policy.minimum), settled: true, .backedOff)
    }

    private mutating func change(
        to interval: Duration, settled: Bool, _ reason: SmartHeartbeat.ChangeReason
    ) -> (from: Duration, reason: SmartHeartbeat.ChangeReason) {
        let from = learned.interval
        learned = LearnedHeartbeat(interval: interval, isSettled: settled)
        return (from, reason)
    }
}

extension Duration {
    /// Whole milliseconds (rounded down).
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
