import AsyncSocket
import Foundation
import LongLink
import Testing
import TestSupport

@Suite struct DeliveryStateStoreTests {
    @Test func inMemoryStoreKeepsTheOutboxTheNextIDAndMergesPositions() throws {
        let store = InMemoryDeliveryStateStore()
        #expect(try store.load() == DeliveryState(nextID: 1, outbox: [], positions: [:]))
        try store.enqueue(id: 1, frame: Data([1]))
        try store.enqueue(id: 2, frame: Data([2]))
        try store.enqueue(id: 5, frame: Data([5]))
        try store.remove(ids: [2, 9])
        try store.setPositions(["room": 4, "direct:a b": 1])
        try store.setPositions(["room": 6])
        #expect(
            try store.load()
                == DeliveryState(
                    nextID: 6, outbox: [OutboxEntry(id: 1, frame: Data([1])), OutboxEntry(id: 5, frame: Data([5]))],
                    positions: ["room": 6, "direct:a b": 1]))
    }

    @Test func failedEnqueueFailsTheSendAndIsCounted() async throws {
        let harness = LinkHarness()
        let store = FailingStore()
        let client = try harness.makeReliableClient(port: 1, store: store)
        #expect(client.send("one") == nil)
        #expect(try await harness.clientEvents.next() == "send failed (cannot persist: disk full): one")
        #expect(client.deliveryStatus?.storeFailures == 1)
        #expect(client.deliveryStatus?.lastStoreError == "disk full")
        #expect(client.deliveryStatus?.outboxCount == 0)
        #expect(client.deliveryStatus?.nextID == 1)  // the id was not used
    }

    @Test func repeatedStoredIDIsRestoredOnce() throws {
        let harness = LinkHarness()
        let frame = NumberedTextCodec.frame("#1 one")
        let store = InMemoryDeliveryStateStore(
            DeliveryState(nextID: 2, outbox: [OutboxEntry(id: 1, frame: frame), OutboxEntry(id: 1, frame: frame)]))
        let client = try harness.makeReliableClient(port: 1, store: store)
        #expect(client.deliveryStatus?.outboxCount == 1)
    }
}

/// A store whose enqueue fails with "disk full".
private final class FailingStore: DeliveryStateStore {
    struct DiskFull: Error, CustomStringConvertible { var description: String { "disk full" } }
    func load() throws -> DeliveryState { DeliveryState() }
    func enqueue(id: UInt64, frame: Data) throws { throw DiskFull() }
    func remove(ids: [UInt64]) throws {}
    func setPositions(_ positions: DeliveryPositions) throws {}
}
