import AsyncSocket
import Foundation
import LongLink
import Testing
import TestSupport

/// A server that does not take a message now (``DeliveryRole/retry(id:after:)``, the chat's
/// `rateLimited`): the message stays in the outbox and is resent after the pause, in order, once.
@Suite struct ReliableLinkRetryTests {
    @Test func aMessageTheServerDidNotTakeIsResentAfterThePauseInOrderAndStoredOnce() async throws {
        let harness = LinkHarness()
        let server = try DeliveryTestServer(harness: harness)
        defer { server.stop() }
        server.busyOnce = [2, 3]
        let client = try harness.makeReliableClient(port: server.port, store: InMemoryDeliveryStateStore())
        defer { client.disconnect() }
        // Sent while offline, so all three go out in one pass at the connect (before any answer).
        for text in ["one", "two", "three"] { client.send(text) }
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.port)")
        #expect(try await harness.clientEvents.next(3) == ["stored #1: #1 one", "received busy 2 2", "received busy 3 2"])
        #expect(try await server.received.next(4) == ["login", "#1 one", "#2 two", "#3 three"])
        // Paused: a new message waits in the outbox too; an unnumbered one (a barrier) still goes.
        #expect(client.send("four") == 4)
        await harness.advance(by: .milliseconds(1_999))
        client.send("?barrier")
        #expect(try await server.received.next() == "?barrier")
        #expect(client.deliveryStatus?.outboxCount == 3)
        await harness.advance(by: .milliseconds(1))
        #expect(try await server.received.next(3) == ["#2 two", "#3 three", "#4 four"])
        #expect(try await harness.clientEvents.next(3) == ["stored #2: #2 two", "stored #3: #3 three", "stored #4: #4 four"])
        #expect(server.stored == ["one", "two", "three", "four"])
        #expect(client.deliveryStatus?.outboxCount == 0)
        #expect(client.deliveryStatus?.resends == 2)
        #expect(client.deliveryStatus?.pauses == 2)
    }

    @Test func theLaterOfTwoPausesWinsAndAReconnectEndsThePause() async throws {
        let harness = LinkHarness()
        let server = try DeliveryTestServer(harness: harness)
        defer { server.stop() }
        server.answersStored = false
        let client = try harness.makeReliableClient(port: server.port, store: InMemoryDeliveryStateStore())
        defer { client.disconnect() }
        client.connect()
        let connected = "connected to 127.0.0.1:\(server.port)"
        #expect(try await harness.clientEvents.next() == connected)
        client.send("one")
        #expect(try await server.received.next(2) == ["login", "#1 one"])
        server.sendRaw("batch\nbusy 1 1\nbusy 1 5")
        #expect(try await harness.clientEvents.next(2) == ["received busy 1 1", "received busy 1 5"])
        await harness.advance(by: .seconds(4))
        client.send("?barrier")
        #expect(try await server.received.next() == "?barrier")  // nothing resent after 1 s: 5 s asked last
        // A reconnect sends the outbox at once, pause or not.
        server.answersStored = true
        server.closeSessions()
        #expect(
            try await harness.clientEvents.next(4) == [
                "disconnected (by server)", "reconnect attempt 1 in 0 s", connected, "stored #1: #1 one"
            ])
        #expect(try await server.received.next(2) == ["login", "#1 one"])
        #expect(server.stored == ["one"])
    }
}
