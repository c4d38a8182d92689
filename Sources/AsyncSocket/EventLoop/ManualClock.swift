import Dispatch
/// Virtual time for tests: loops created with this clock fire their timers only when ``advance(by:)``
/// moves the clock past the deadlines, never because real time passed ("advance 49 ms: nothing; 1 ms
/// more: the event", as SwiftNIO's embedded-loop tests do).
public final class ManualClock: Sendable {
    private struct State {
        var nanoseconds: UInt64 = 1_000_000_000
        var loops: [EventLoop] = []
    }
    private let state = LockedValue(State())

    /// A clock at an arbitrary start time.
    public init() {}

    /// The current virtual time in nanoseconds.
    var nanoseconds: UInt64 { state.withLock { $0.nanoseconds } }

    func attach(_ loop: EventLoop) { state.withLock { $0.loops.append(loop) } }

    /// Forgets a loop that stopped, so ``advance(by:)`` does not wait for it.
    func detach(_ loop: EventLoop) { state.withLock { $0.loops.removeAll { $0 === loop } } }

    /// Moves time forward by `duration` without waiting for any loop (an embedded loop's clock, which
    /// its own ``EventLoop/advance(by:)`` moves on the loop's thread).
    func moveForward(by duration: Duration) {
        state.withLock { $0.nanoseconds &+= duration.nanosecondsClamped }
    }

    /// Moves time forward by `duration`: ``advance(by:draining:)`` with no queues.
    public func advance(by duration: Duration) async { await advance(by: duration, draining: []) }

    /// Moves time forward by `duration` as SwiftNIO's `NIOAsyncTestingEventLoop.advanceTime(by:)` does:
    /// first ``settle(draining:)`` at the current time (so what is under way, a connect, an accept, a
    /// reply, happens before the clock moves, however slow the machine), then the move, then
    /// ``settle(draining:)`` again, so the timers now due and everything they set off have run when it
    /// returns. `queues`: dispatch queues the loops hand events to (and that may hand work back).
    public func advance(by duration: Duration, draining queues: [DispatchQueue]) async {
        await settle(draining: queues)
        let loops = state.withLock { state -> [EventLoop] in
            state.nanoseconds &+= duration.nanosecondsClamped
            return state.loops
        }
        for loop in loops { loop.wakeup() }
        await settle(draining: queues)
    }

    /// Returns once every attached loop and every queue in `queues` has nothing left to do at the
    /// current virtual time: each loop made an iteration with no ready descriptor, no timer due and
    /// no task, the queues ran what they had, and the loops then did nothing more (what a queue ran
    /// handed them nothing). Gives up after 1,000 rounds (a descriptor that stays ready, a ping-pong
    /// that never ends) and returns anyway: the test's own expectations then say what is missing.
    public func settle(draining queues: [DispatchQueue] = []) async {
        for _ in 0..<1_000 {
            let before = await idleCounts()
            for queue in queues {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    queue.async { continuation.resume() }
                }
            }
            if await idleCounts() == before { return }
        }
    }

    /// Waits for each attached loop to be idle; returns their busy-iteration counts then.
    private func idleCounts() async -> [UInt64] {
        var counts: [UInt64] = []
        for loop in state.withLock({ $0.loops }) {
            counts.append(
                await withCheckedContinuation { (continuation: CheckedContinuation<UInt64, Never>) in
                    loop.whenIdle { continuation.resume(returning: $0) }
                })
        }
        return counts
    }
}
