/// When a server gives its free heap pages back to the kernel (``ResourceLimits/releaseFreeHeapMemory()``),
/// decided in virtual time: a pure value, fed the server's activity counts and the time at each tick
/// (``HeapTrimmer`` feeds it on a timer; tests feed it by hand).
///
/// Why: many connections opening (or closing) at once interleave short-lived allocations (a login's
/// buffers, a dictionary's old table as it grows) with long-lived ones (each session's objects), and
/// glibc's malloc keeps the freed pages among them for reuse: 50–270 B of RSS per logged-in idle chat user
/// at 19,000 users (docs/BENCHMARKS.md "Issue 35 §2"). One trim after the burst gives them back.
///
/// Two counts feed it: `activity`, what comes in bursts (connections opened and closed, logins), and
/// `background`, what goes on steadily (heartbeats answered, messages delivered), whose allocations reuse
/// the free pages a trim gave back, a few at a time. The rule: a burst of at least ``minimumActivity``
/// (counted from the last trim after a quiet period, or from the start) is trimmed once `activity` has
/// not changed for ``quietPeriod`` (the burst is over), however busy `background` is. Besides, every
/// ``longestDelay`` since the last trim, a trim is due when both counts together grew by at least
/// ``minimumActivity`` since it: a burst without a pause, or the heartbeats of many idle users. A burst
/// trimmed on the way is trimmed again at its end, however little came after. A server that does
/// nothing never trims.
public struct HeapTrimPolicy: Sendable, Equatable {
    /// How much activity (counts the caller chooses: connections opened plus closed, say) since the last
    /// trim makes another one worth its cost. Default 1,000.
    public var minimumActivity: UInt64
    /// How long `activity` must stay unchanged before a trim: the end of a burst. Default 2 s.
    public var quietPeriod: Duration
    /// The longest time between two trims while activity (of either count) goes on. Default 30 s.
    public var longestDelay: Duration

    /// The activity count at the last trim (or at the start).
    private(set) var activityAtTrim: UInt64
    /// The activity count at the last trim after a quiet period (or at the start): where a burst begins.
    private(set) var activityAtQuietTrim: UInt64
    /// The count the last tick saw, and when it last changed.
    private(set) var lastActivity: UInt64
    private(set) var changedAt: Duration
    /// When the last trim was (or the start).
    private(set) var trimmedAt: Duration
    /// Both counts together at the last trim (or at the start).
    private(set) var totalAtTrim: UInt64

    /// A policy that starts at time `now` (any origin: the same as the later ticks') with the counts
    /// `activity` and `background`: what happened before it does not count.
    public init(
        minimumActivity: UInt64 = 1_000, quietPeriod: Duration = .seconds(2), longestDelay: Duration = .seconds(30),
        activity: UInt64 = 0, background: UInt64 = 0, now: Duration = .zero
    ) {
        totalAtTrim = activity &+ background
        self.minimumActivity = minimumActivity
        self.quietPeriod = quietPeriod
        self.longestDelay = longestDelay
        activityAtTrim = activity
        activityAtQuietTrim = activity
        lastActivity = activity
        changedAt = now
        trimmedAt = now
    }

    /// One tick: the counts now (they only grow; a count that wraps around is taken as the difference)
    /// at time `now` (the same origin as ``init(minimumActivity:quietPeriod:longestDelay:activity:background:now:)``'s,
    /// never earlier than the last tick's). Returns true when the caller should trim now, and then counts
    /// that as the last trim.
    public mutating func tick(activity: UInt64, background: UInt64 = 0, now: Duration) -> Bool {
        if activity != lastActivity {
            lastActivity = activity
            changedAt = now
        }
        let total = activity &+ background
        // The burst is over: trim it if it was large enough and some of it came since the last trim.
        let burstOver =
            now - changedAt >= quietPeriod && activity &- activityAtQuietTrim >= minimumActivity
            && activity != activityAtTrim
        // Activity goes on (a burst without a pause, or the background): trim at most every longestDelay.
        let due = now - trimmedAt >= longestDelay && total &- totalAtTrim >= minimumActivity
        guard burstOver || due else { return false }
        if burstOver { activityAtQuietTrim = activity }
        activityAtTrim = activity
        totalAtTrim = total
        trimmedAt = now
        return true
    }
}
