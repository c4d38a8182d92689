import AsyncSocket
import Dispatch
import Testing
import TestSupport

@testable import ChatServer

/// ``ChangeBatch``: changes that arrive while a batch waits join it, in order; the next change after
/// a batch ran starts a new one.
@Suite struct ChangeBatchTests {
    @Test func changesArrivingWhileABatchWaitsJoinItInOrder() async throws {
        let queue = DispatchQueue(label: "ChangeBatchTests")
        let batches = EventRecorder<[String]>()
        let batch = ChangeBatch<String>(queue: queue, delay: .milliseconds(0)) { batches.record($0) }
        queue.suspend()  // the first batch cannot run before all three have come
        for change in ["ann on n2", "bob on n3", "ann offline"] { batch.add(change) }
        queue.resume()
        #expect(try await batches.next() == ["ann on n2", "bob on n3", "ann offline"])
        batch.add("cy on n2")
        #expect(try await batches.next() == ["cy on n2"])
        queue.sync {}
        #expect(batches.pending.isEmpty)
    }

    /// What ``ChangeBatch/takeAll()`` took is not applied again; what comes after it is, by the batch
    /// already scheduled.
    @Test func changesTakenBeforeTheirBatchRunsAreNotAppliedAgain() async throws {
        let queue = DispatchQueue(label: "ChangeBatchTests")
        let batches = EventRecorder<[String]>()
        let batch = ChangeBatch<String>(queue: queue, delay: .milliseconds(0)) { batches.record($0) }
        queue.suspend()
        batch.add("ann on n2")
        #expect(batch.takeAll() == ["ann on n2"])
        batch.add("bob on n2")
        queue.resume()
        #expect(try await batches.next() == ["bob on n2"])
        batch.add("cy on n2")
        #expect(try await batches.next() == ["cy on n2"])
        queue.sync {}
        #expect(batches.pending.isEmpty)
    }
}
