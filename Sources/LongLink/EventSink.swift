import Dispatch

/// Where a link's events go: a handler run on a queue, or inline on the calling (event-loop) thread
/// when there is no queue. Events reach the handler in the order they were emitted.
struct EventSink<Event: Sendable>: Sendable {
    let queue: DispatchQueue?
    let handler: @Sendable (Event) -> Void

    func emit(_ event: Event) {
        let handler = self.handler
        perform { handler(event) }
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
