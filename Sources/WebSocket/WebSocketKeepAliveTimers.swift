import AsyncSocket

/// The keep-alive timers of every ``WebSocket`` on one event loop, run by one loop timer per delay
/// instead of one per connection (a loop timer costs about 200 bytes of heap per idle connection: the
/// `Scheduled`, the heap entry and two closures; docs/BENCHMARKS.md, "WebSocket idle memory").
///
/// Connections that start a timer of the same delay have deadlines in the order they started it, so
/// each delay keeps its connections in a first-in first-out list (linked through their
/// ``WebSocketSocketCallbacks``): starting or restarting a timer moves the connection to the list's
/// end, stopping it unlinks it, both O(1), and the one loop timer of a list is set for its first
/// deadline. Each connection's timer fires at exactly its own deadline, as a loop timer of its own
/// would (virtual time included).
///
/// A list holds its connections' callbacks objects strongly; they hold the ``WebSocket`` weakly, so a
/// WebSocket the app lets go of is not kept alive by its timer (its entry is dropped when it comes due).
/// Loop thread only (hence unchecked `Sendable`: its timer closures carry it); one per loop
/// (``EventLoop/loopLocal(_:)``).
final class WebSocketKeepAliveTimers: @unchecked Sendable {
    /// The connections waiting with one delay, earliest deadline first.
    final class List: @unchecked Sendable {
        /// The delay in nanoseconds.
        let delay: UInt64
        var first: WebSocketSocketCallbacks?
        unowned(unsafe) var last: WebSocketSocketCallbacks?
        /// The deadline the list's loop timer is set for, or nil when none is set. A timer is never
        /// cancelled: one that comes for a connection that left the list finds nothing due and is set
        /// again for the first deadline left.
        var timerDeadline: UInt64?

        init(delay: UInt64) { self.delay = delay }
    }

    private unowned let loop: EventLoop
    /// The lists by delay (in nanoseconds): a loop whose WebSockets share settings has two at most,
    /// the ping interval and the pong timeout, or one when they are equal (the default, 20 s).
    private var lists: [UInt64: List] = [:]

    init(loop: EventLoop) { self.loop = loop }

    /// The loop's timers (made on first use). Loop thread only.
    static func on(_ loop: EventLoop) -> WebSocketKeepAliveTimers {
        loop.loopLocal { WebSocketKeepAliveTimers(loop: loop) }
    }

    deinit {
        // Unlink one by one: releasing a long list from its head would recurse once per connection.
        for list in lists.values {
            while let entry = list.first { unlink(entry, from: list) }
        }
    }

    /// Starts (or restarts) `entry`'s timer: it fires `delay` from now, on the loop, with
    /// ``WebSocketSocketCallbacks/keepAliveTimerFired()``.
    func start(_ entry: WebSocketSocketCallbacks, after delay: Duration) {
        stop(entry)
        let nanoseconds = delay.nanoseconds
        let list = lists[nanoseconds] ?? makeList(nanoseconds)
        entry.keepAliveDeadline = loop.now() &+ nanoseconds
        entry.keepAliveList = list
        entry.keepAlivePrevious = list.last
        if let last = list.last { last.keepAliveNext = entry } else { list.first = entry }
        list.last = entry
        if list.timerDeadline == nil { setTimer(list, for: entry.keepAliveDeadline) }
    }

    /// Stops `entry`'s timer, if it runs.
    func stop(_ entry: WebSocketSocketCallbacks) {
        guard let list = entry.keepAliveList else { return }
        unlink(entry, from: list)
    }

    private func makeList(_ delay: UInt64) -> List {
        let list = List(delay: delay)
        lists[delay] = list
        return list
    }

    private func unlink(_ entry: WebSocketSocketCallbacks, from list: List) {
        let next = entry.keepAliveNext
        if let previous = entry.keepAlivePrevious { previous.keepAliveNext = next } else { list.first = next }
        if let next { next.keepAlivePrevious = entry.keepAlivePrevious } else { list.last = entry.keepAlivePrevious }
        entry.keepAliveNext = nil
        entry.keepAlivePrevious = nil
        entry.keepAliveList = nil
    }

    private func setTimer(_ list: List, for deadline: UInt64) {
        list.timerDeadline = deadline
        let now = loop.now()
        let delay = Duration.nanoseconds(Int64(clamping: deadline > now ? deadline - now : 0))
        loop.scheduleTask(in: delay) { [self] in fire(list) }
    }

    /// The list's timer fired: the connections whose deadline has come, in order, each told once; then
    /// the timer is set for the first deadline left.
    private func fire(_ list: List) {
        let now = loop.now()
        // Set while the due ones are told, so a timer they start again sets no loop timer of its own.
        list.timerDeadline = now
        while let entry = list.first, entry.keepAliveDeadline <= now {
            unlink(entry, from: list)
            entry.keepAliveTimerFired()  // may start its timer again: at the end of a list
        }
        list.timerDeadline = nil
        if let first = list.first { setTimer(list, for: first.keepAliveDeadline) }
    }
}

extension Duration {
    /// Whole nanoseconds, 0 for a negative duration, clamped to `UInt64.max`.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
