import AsyncSocket
import Foundation
import LongLink
import Testing
import TestSupport

/// The link's calls into its ``DeliveryStateStore`` run on its store queue, never on its event loop.
@Suite struct ReliableLinkStoreQueueTests {
    /// An in-memory store that records each call and whether it ran on `loop`'s thread.
    final class LoopWatchingStore: DeliveryStateStore {
        let inner = InMemoryDeliveryStateStore()
        let loop: EventLoop
        /// Each call, "name" or "name ON THE LOOP".
        let calls = LockedValue<[String]>([])

        init(loop: EventLoop) { self.loop = loop }

        private func note(_ name: String) { calls.withLock { $0.append(loop.inEventLoop ? "\(name) ON THE LOOP" : name) } }

        func load() throws -> DeliveryState { try inner.load() }
        func enqueue(id: UInt64, frame: Data) throws {
            note("enqueue")
            try inner.enqueue(id: id, frame: frame)
        }
        func remove(ids: [UInt64]) throws {
            note("remove")
            try inner.remove(ids: ids)
        }
        func setPositions(_ positions: DeliveryPositions) throws {
            note("setPositions")
            try inner.setPositions(positions)
        }
    }

    @Test func sendsAnswersDeliveriesAndTheDrainCallTheStoreOffTheLoop() async throws {
        let harness = LinkHarness()
        let server = try DeliveryTestServer(harness: harness)
        defer { server.stop() }
        let store = LoopWatchingStore(loop: harness.group.next())
        let client = try harness.makeReliableClient(port: server.port, store: store)
        defer { client.disconnect() }
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.port)")
        #expect(client.send("one") == 1)
        #expect(try await harness.clientEvents.next() == "stored #1: #1 one")
        server.append("hi", to: "room")
        #expect(try await harness.clientEvents.next() == "received deliver room 1 hi")
        #expect(try await server.received.next(3) == ["login", "#1 one", "ack room 1"])
        client.disconnectAfterSending()
        #expect(try await harness.clientEvents.next() == "disconnected (by user)")
        await harness.drainEventQueues()
        #expect(store.calls.withLock { $0 } == ["enqueue", "remove", "setPositions"])
        #expect(store.inner.snapshot == DeliveryState(nextID: 2, positions: ["room": 1]))
    }
}
