import AsyncSocket
import Dispatch

/// Changes that arrive one at a time on one thread (the presence watch's), handed to a queue in
/// batches: the first change of a batch schedules it `delay` later on `queue`, and every change that
/// arrives meanwhile joins it; `apply` gets them in arrival order. At a node's failover, when every
/// survivor hears of thousands of users in a few seconds, one routing-queue wake-up per change cost
/// more than the change (issue 35 §3); with a 5 ms delay it is at most 200 a second.
final class ChangeBatch<Change: Sendable>: Sendable {
    private struct Pending {
        var changes: [Change] = []
        var scheduled = false
    }

    private let pending = LockedValue(Pending())
    private let queue: DispatchQueue
    private let delay: DispatchTimeInterval
    private let apply: @Sendable ([Change]) -> Void

    /// - Parameters:
    ///   - queue: where `apply` runs.
    ///   - delay: how long a batch waits for more changes after its first.
    ///   - apply: takes a batch, in arrival order (on `queue`).
    init(queue: DispatchQueue, delay: DispatchTimeInterval, apply: @escaping @Sendable ([Change]) -> Void) {
        self.queue = queue
        self.delay = delay
        self.apply = apply
    }

    /// Adds `change` to the waiting batch, or starts one. Any thread.
    func add(_ change: Change) {
        let starts = pending.withLock { pending -> Bool in
            pending.changes.append(change)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        guard starts else { return }
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            let changes = pending.withLock { pending -> [Change] in
                defer { pending = Pending() }
                return pending.changes
            }
            if !changes.isEmpty { apply(changes) }
        }
    }

    /// Takes the waiting batch now, in arrival order (its scheduled run then finds nothing). Any
    /// thread; on `queue` nothing can come between it and what runs next there.
    func takeAll() -> [Change] {
        pending.withLock { pending -> [Change] in
            defer { pending.changes.removeAll() }
            return pending.changes
        }
    }
}
