import Dispatch
import Synchronization

/// Where a link's events go: a handler run on a queue, or inline on the calling (event-loop) thread
/// when there is no queue. Events reach the handler in the order they were emitted.
struct EventSink<Event: Sendable>: Sendable {
    let queue: DispatchQueue?
    let handler: @Sendable (Event) -> Void
    /// Events emitted to `queue` that its handler has not yet run (always 0 without a queue).
    let pending = PendingEventCount()

    func emit(_ event: Event) {
        let handler = self.handler
        guard let queue else { return handler(event) }
        let pending = self.pending
        pending.value.add(1, ordering: .relaxed)
        queue.async {
            handler(event)
            pending.value.subtract(1, ordering: .relaxed)
        }
    }

    /// Runs `work` where events run, after the events emitted before it.
    func perform(_ work: @escaping @Sendable () -> Void) {
        guard let queue else {
            work()
            return
        }
        queue.async(execute: work)
    }
}

/// How many events wait on an ``EventSink``'s queue: one atomic counter, raised when an event is
/// queued and lowered once its handler returned.
final class PendingEventCount: Sendable {
    let value = Atomic<Int>(0)
}
