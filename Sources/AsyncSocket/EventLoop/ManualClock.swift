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

    /// Moves time forward by `duration` and returns once every attached loop has run the timers that
    /// are now due (and whatever those timers run on the loop synchronously).
    public func advance(by duration: Duration) async {
        let loops = state.withLock { state -> [EventLoop] in
            state.nanoseconds &+= duration.nanosecondsClamped
            return state.loops
        }
        for loop in loops {
            // Timers run before tasks within an iteration, so this task runs after the due timers.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                loop.execute { continuation.resume() }
            }
        }
    }
}
