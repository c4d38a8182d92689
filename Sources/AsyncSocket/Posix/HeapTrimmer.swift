import Dispatch

/// Gives a server's free heap pages back to the kernel after bursts of connections: every `interval` it
/// reads the caller's two activity counts, asks its ``HeapTrimPolicy``, and when the policy says so calls
/// ``ResourceLimits/releaseFreeHeapMemory()`` (malloc_trim(3)) and reports how long that took.
///
/// The timer and the trim run on a queue of the trimmer's own (not the server's): a trim holds each
/// malloc arena's lock while it walks the arena (a few milliseconds at tens of megabytes), so other
/// threads that allocate wait that long at most, once per burst. Thread-safe.
public final class HeapTrimmer: Sendable {
    private let queue = DispatchQueue(label: "AsyncSocket.HeapTrimmer", qos: .utility)
    private let interval: Duration
    private let activity: @Sendable () -> UInt64
    private let background: @Sendable () -> UInt64
    private let trim: @Sendable () -> Bool
    private let trimmed: @Sendable (_ released: Bool, _ took: Duration) -> Void
    private let state: LockedValue<(policy: HeapTrimPolicy, timer: DispatchSourceTimer?)>
    private let origin = ContinuousClock.now

    /// A trimmer, not yet started.
    ///
    /// - Parameters:
    ///   - policy: when to trim; its times and counts start at this call. Default ``HeapTrimPolicy/init(minimumActivity:quietPeriod:longestDelay:activity:background:now:)``'s
    ///     (a burst of 1,000, then 2 s without any; or 1,000 of either count in 30 s since the last trim).
    ///   - interval: how often the count is read (default 1 s; at least 1 ms, at most a day).
    ///   - activity: the count of what comes in bursts (a metric's atomic counter: connections opened
    ///     plus closed, say), read on the trimmer's queue.
    ///   - background: the count of what goes on steadily (heartbeats answered, say), read on the
    ///     trimmer's queue. Default: none (0).
    ///   - trim: what trims (default ``ResourceLimits/releaseFreeHeapMemory()``); returns whether memory
    ///     was released. Called on the trimmer's queue.
    ///   - trimmed: called on the trimmer's queue after each trim, with what `trim` returned and how long
    ///     it took (for the operator's log). Default: nothing.
    public init(
        policy: HeapTrimPolicy = HeapTrimPolicy(),
        interval: Duration = .seconds(1),
        activity: @escaping @Sendable () -> UInt64,
        background: @escaping @Sendable () -> UInt64 = { 0 },
        trim: @escaping @Sendable () -> Bool = { ResourceLimits.releaseFreeHeapMemory() },
        trimmed: @escaping @Sendable (_ released: Bool, _ took: Duration) -> Void = { _, _ in }
    ) {
        self.interval = interval
        self.activity = activity
        self.background = background
        self.trim = trim
        self.trimmed = trimmed
        // The policy's clock starts now (time zero), with the count as it is now.
        let started = HeapTrimPolicy(
            minimumActivity: policy.minimumActivity, quietPeriod: policy.quietPeriod,
            longestDelay: policy.longestDelay, activity: activity(), background: background(), now: .zero)
        state = LockedValue((policy: started, timer: nil))
    }

    /// Starts the timer (nothing if it runs already).
    public func start() {
        state.withLock { state in
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            // Whole nanoseconds, at least 1 ms and at most a day.
            let seconds = min(max(interval.components.seconds, 0), 86_400)
            let nanoseconds = max(Int(seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000), 1_000_000)
            timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            state.timer = timer
        }
    }

    /// Stops the timer; a trim under way finishes.
    public func stop() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
    }

    deinit { stop() }

    /// One tick of the timer, on the trimmer's queue.
    private func tick() {
        let count = activity(), steady = background()
        let now = origin.duration(to: .now)
        guard state.withLock({ $0.policy.tick(activity: count, background: steady, now: now) }) else { return }
        let start = ContinuousClock.now
        let released = trim()
        trimmed(released, start.duration(to: .now))
    }
}
