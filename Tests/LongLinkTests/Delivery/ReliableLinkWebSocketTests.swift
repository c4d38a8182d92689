import AsyncSocket
import Dispatch
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Reliable delivery with the link carried by a WebSocket: every message exactly once across a reconnect.
@Suite struct ReliableLinkWebSocketTests {
    @Test func everyMessageIsDeliveredExactlyOnceAcrossAReconnect() async throws {
        let harness = LinkHarness()
        let server = try DeliveryTestServer(harness: harness, webSocket: .init(port: 0, path: "/link"))
        defer { server.stop() }
        let port = server.server.webSocketPort
        let endpoint = try Endpoint(webSocket: "ws://127.0.0.1:\(port)/link")
        let client = try harness.makeReliableClient(port: 0, store: InMemoryDeliveryStateStore()) { $0.endpoints = [endpoint] }
        defer { client.disconnect() }
        client.connect()
        let connected = "connected to 127.0.0.1:\(port)"
        #expect(try await harness.clientEvents.next() == connected)
        #expect(try await server.received.next() == "login")
        // Up: one message each way.
        #expect(client.send("one") == 1)
        #expect(try await harness.clientEvents.next() == "stored #1: #1 one")
        server.append("a", to: "room")
        #expect(try await harness.clientEvents.next() == "received deliver room 1 a")
        _ = try await server.received.first { $0 == "ack room 1" }
        // Then the answers and a delivery are lost, and the server drops the connection.
        server.answersStored = false
        #expect(client.send("two") == 2)
        #expect(client.send("three") == 3)
        #expect(try await server.received.next(2) == ["#2 two", "#3 three"])
        server.append("b", to: "room", lost: true)
        server.answersStored = true
        server.closeSessions()
        let afterDrop = try await harness.clientEvents.next(6)
        #expect(
            afterDrop == [
                "disconnected (by server)", "reconnect attempt 1 in 0 s", connected, "received deliver room 2 b",
                "stored #2: #2 two", "stored #3: #3 three"
            ])
        #expect(try await server.received.next(4) == ["login room=1", "#2 two", "#3 three", "ack room 2"])
        // Each message stored once, each delivery passed on once.
        #expect(server.stored == ["one", "two", "three"])
        await harness.drainEventQueues()
        #expect(harness.clientEvents.pending == [])
        #expect(client.deliveryStatus?.outboxCount == 0)
        #expect(client.deliveryStatus?.positions == ["room": 2])
        #expect(client.deliveryStatus?.duplicatesDropped == 0)
    }
}
