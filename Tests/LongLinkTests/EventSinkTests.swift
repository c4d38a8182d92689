import AsyncSocket
import Dispatch
import Testing

@testable import LongLink

/// The count of events waiting on the event queue (`LongLinkServer.pendingEvents`, the chat's
/// `chat_routing_queue_depth`), with the queue held by the test.
@Suite struct EventSinkTests {
    @Test func eventsQueuedAndNotYetHandledAreCountedUntilTheirHandlerReturns() {
        let queue = DispatchQueue(label: "EventSinkTests")
        let handled = LockedValue<[Int]>([])
        let sink = EventSink<Int>(queue: queue) { event in handled.withLock { $0.append(event) } }
        queue.suspend()
        for event in 1...3 { sink.emit(event) }
        #expect(sink.pending.value.load(ordering: .relaxed) == 3)
        #expect(handled.withLock { $0 } == [])
        queue.resume()
        queue.sync {}
        #expect(sink.pending.value.load(ordering: .relaxed) == 0)
        #expect(handled.withLock { $0 } == [1, 2, 3])
    }

    @Test func withoutAQueueEventsRunInlineAndNothingIsPending() {
        let handled = LockedValue<[Int]>([])
        let sink = EventSink<Int>(queue: nil) { event in handled.withLock { $0.append(event) } }
        sink.emit(7)
        #expect(handled.withLock { $0 } == [7])
        #expect(sink.pending.value.load(ordering: .relaxed) == 0)
    }
}
