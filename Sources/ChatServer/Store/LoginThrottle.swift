/// Failed-login throttling per name and per address, as a pure state machine: the time is passed in
/// (tests move it by hand), nothing runs on its own.
///
/// With the ``Configuration`` defaults: 5 failed logins for one name (or from one address) within
/// 15 minutes lock it for 30 s; each further lockout doubles (30 s, 1, 2, 4, 8 min) up to 15 min;
/// the doubling is forgotten after an hour without a failure. While locked, every login for that name
/// (or from that address) is refused without checking its password — the right password too, or the
/// lockout would tell a guesser when they were right — with the time left (the `throttled` error's
/// `retryAfter`). A successful login clears its name's record, not its address's. So a guesser gets at
/// most 5 tries per lockout: 480 a day per name once lockouts reach 15 min, whichever addresses
/// they use; the cost is that a guesser can keep a name's owner locked out too (the owner is told
/// for how long).
///
/// Memory: one record per name and address with a recent failure or lockout (a few hundred bytes);
/// records that no longer matter are dropped when the count doubles since the last sweep, and by
/// ``prune(now:)``.
///
/// Threading: a value type; the server keeps it on its routing queue.
public struct LoginThrottle: Sendable {
    /// The figures; defaults as in the type's description.
    public struct Configuration: Sendable, Equatable {
        /// Failures within ``window`` that lock a name or address. Default 5.
        public var maxFailures: Int
        /// How far back failures count. Default 15 min.
        public var window: Duration
        /// The first lockout's length; each following one doubles. Default 30 s.
        public var firstLockout: Duration
        /// The longest lockout. Default 15 min.
        public var maxLockout: Duration
        /// After this long without a failure, lockouts start from ``firstLockout`` again. Default 1 h.
        public var forgetAfter: Duration

        /// The defaults, with any of them replaced.
        /// - Precondition: `maxFailures` ≥ 1, durations positive.
        public init(
            maxFailures: Int = 5, window: Duration = .seconds(15 * 60), firstLockout: Duration = .seconds(30),
            maxLockout: Duration = .seconds(15 * 60), forgetAfter: Duration = .seconds(60 * 60)
        ) {
            precondition(maxFailures >= 1 && window > .zero && firstLockout > .zero && maxLockout > .zero && forgetAfter > .zero)
            self.maxFailures = maxFailures
            self.window = window
            self.firstLockout = firstLockout
            self.maxLockout = maxLockout
            self.forgetAfter = forgetAfter
        }
    }

    /// What is locked.
    public enum Subject: Sendable, Equatable {
        /// The name logged in as.
        case name
        /// The address logged in from.
        case address
    }

    /// Whether a login may try its password.
    public enum Decision: Sendable, Equatable {
        /// Check the password.
        case allowed
        /// Refuse without checking: `subject` is locked for `retryAfter` more (when both are, the one
        /// locked longer; the name on a tie).
        case refused(retryAfter: Duration, subject: Subject)
    }

    private struct Record {
        /// Failures within the window, oldest first, fewer than maxFailures.
        var failures: [ContinuousClock.Instant] = []
        var lockouts = 0
        var lockedUntil: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant
    }

    /// The figures in use.
    public let configuration: Configuration
    private var names: [String: Record] = [:]
    private var addresses: [String: Record] = [:]
    private var sweepAbove = 1_024

    /// A throttle with `configuration` (default: the defaults) that has seen nothing.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether a login as `name` from `address` (the peer's IP address, without the port) may check
    /// its password at `now`.
    public func check(name: String, address: String, now: ContinuousClock.Instant) -> Decision {
        let nameLeft = names[name]?.lockedUntil.map { $0 - now } ?? .zero
        let addressLeft = addresses[address]?.lockedUntil.map { $0 - now } ?? .zero
        if nameLeft > .zero, nameLeft >= addressLeft { return .refused(retryAfter: nameLeft, subject: .name) }
        if addressLeft > .zero { return .refused(retryAfter: addressLeft, subject: .address) }
        return .allowed
    }

    /// Records a wrong password for `name` from `address` at `now` and returns what the next login
    /// would meet (``Decision/refused(retryAfter:subject:)`` when this failure locked one of them).
    /// Failures while locked (logins that should have been refused) are not counted.
    @discardableResult
    public mutating func recordFailure(name: String, address: String, now: ContinuousClock.Instant) -> Decision {
        Self.fail(&names[name, default: Record(lastFailure: now)], at: now, configuration)
        Self.fail(&addresses[address, default: Record(lastFailure: now)], at: now, configuration)
        if names.count + addresses.count > sweepAbove {
            prune(now: now)
            sweepAbove = max(1_024, 2 * (names.count + addresses.count))
        }
        return check(name: name, address: address, now: now)
    }

    /// Records a successful login as `name`: its failures and lockouts are forgotten (the address's
    /// are kept, so one's own account cannot reset an address's count).
    public mutating func recordSuccess(name: String) {
        names[name] = nil
    }

    /// Drops the records that no longer affect any decision at `now`: not locked, no failure within the
    /// window, and lockouts forgotten.
    public mutating func prune(now: ContinuousClock.Instant) {
        let configuration = self.configuration
        func matters(_ record: Record) -> Bool {
            if let lockedUntil = record.lockedUntil, lockedUntil > now { return true }
            if record.failures.contains(where: { now - $0 < configuration.window }) { return true }
            return record.lockouts > 0 && now - record.lastFailure < configuration.forgetAfter
        }
        names = names.filter { matters($0.value) }
        addresses = addresses.filter { matters($0.value) }
    }

    /// How many names and addresses have a record now (for tests and statistics).
    public var recordCount: Int { names.count + addresses.count }

    private static func fail(_ record: inout Record, at now: ContinuousClock.Instant, _ configuration: Configuration) {
        if let lockedUntil = record.lockedUntil, now < lockedUntil { return }
        if now - record.lastFailure >= configuration.forgetAfter { record.lockouts = 0 }
        record.failures.removeAll { now - $0 >= configuration.window }
        record.failures.append(now)
        record.lastFailure = now
        guard record.failures.count >= configuration.maxFailures else { return }
        record.failures = []
        record.lockouts += 1
        // firstLockout × 2^(lockouts - 1), the exponent capped so it cannot overflow.
        let lockout = configuration.firstLockout * (1 << min(record.lockouts - 1, 30))
        record.lockedUntil = now + min(lockout, configuration.maxLockout)
    }
}
