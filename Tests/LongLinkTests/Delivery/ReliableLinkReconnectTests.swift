import AsyncSocket
import LongLink
import Testing
import TestSupport

/// The reconnect policy of a reliable link, in virtual time.
@Suite struct ReliableLinkReconnectTests {
    @Test func reliableLinkKeepsTryingAfterReportingTheServerUnavailableOnce() async throws {
        let harness = LinkHarness()
        let reserved = ReservedLoopbackPort(sharedWithServer: true)
        let port = reserved.port
        let client = try harness.makeReliableClient(port: port, store: InMemoryDeliveryStateStore())
        defer { client.disconnect() }
        client.connect()
        let refused = "connect failed: connect: Connection refused (errno 111)"
        do {
            let got = try await harness.clientEvents.next(4);
            #expect(got == [refused, "reconnect attempt 1 in 0 s", refused, "reconnect attempt 2 in 2 s"])
        }
        await harness.advance(by: .seconds(2))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "reconnect attempt 3 in 4 s"]) }
        await harness.advance(by: .seconds(4))
        do {
            let got = try await harness.clientEvents.next(3); #expect(got == [refused, "server unavailable", "reconnect attempt 4 in 8 s"])
        }
        await harness.advance(by: .milliseconds(7999))
        await harness.drainEventQueues()
        #expect(harness.clientEvents.pending == [])
        await harness.advance(by: .milliseconds(1))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "reconnect attempt 5 in 16 s"]) }
        for (waited, next) in [
            (16, "reconnect attempt 6 in 32 s"), (32, "reconnect attempt 7 in 60 s"), (60, "reconnect attempt 8 in 60 s")
        ] {
            await harness.advance(by: .seconds(waited))
            do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, next]) }
        }
        let server = try DeliveryTestServer(harness: harness, port: port)
        defer { server.stop() }
        reserved.release()
        await harness.advance(by: .seconds(60))
        do { let got = try await harness.clientEvents.next(); #expect(got == "connected to 127.0.0.1:\(port)") }
        #expect(try await server.received.next() == "login")
    }

    @Test func reliableLinkToldToGiveUpStopsAfterTheSchedule() async throws {
        let harness = LinkHarness()
        let reserved = ReservedLoopbackPort()
        let client = try harness.makeReliableClient(port: reserved.port, store: InMemoryDeliveryStateStore()) {
            $0.reconnectPolicy = .giveUp
        }
        defer { client.disconnect() }
        client.connect()
        let refused = "connect failed: connect: Connection refused (errno 111)"
        do {
            let got = try await harness.clientEvents.next(4);
            #expect(got == [refused, "reconnect attempt 1 in 0 s", refused, "reconnect attempt 2 in 2 s"])
        }
        await harness.advance(by: .seconds(2))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "reconnect attempt 3 in 4 s"]) }
        await harness.advance(by: .seconds(4))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "server unavailable"]) }
        await harness.advance(by: .seconds(600))
        await harness.drainEventQueues()
        #expect(harness.clientEvents.pending == [])
    }

    @Test func plainLinkToldToKeepTryingDoesSo() async throws {
        let harness = LinkHarness()
        let reserved = ReservedLoopbackPort()
        let client = harness.makeClient(port: reserved.port) {
            $0.reconnectDelays = [.zero]
            $0.reconnectPolicy = .keepTrying(cap: .seconds(3))
        }
        defer { client.disconnect() }
        client.connect()
        let refused = "connect failed: connect: Connection refused (errno 111)"
        #expect(
            try await harness.clientEvents.next(5) == [
                refused, "reconnect attempt 1 in 0 s", refused, "server unavailable", "reconnect attempt 2 in 2 s"
            ])
        await harness.advance(by: .seconds(2))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "reconnect attempt 3 in 3 s"]) }
        await harness.advance(by: .seconds(3))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "reconnect attempt 4 in 3 s"]) }
    }

    @Test func keepTryingStopsAtUnavailableWhenTheAppAskedToCloseAfterSending() async throws {
        let harness = LinkHarness()
        let reserved = ReservedLoopbackPort()
        let client = try harness.makeReliableClient(port: reserved.port, store: InMemoryDeliveryStateStore()) {
            $0.reconnectDelays = [.zero, .seconds(2)]
        }
        defer { client.disconnect() }
        #expect(client.send("one") == 1)
        client.connect()
        let refused = "connect failed: connect: Connection refused (errno 111)"
        do {
            let got = try await harness.clientEvents.next(4);
            #expect(got == [refused, "reconnect attempt 1 in 0 s", refused, "reconnect attempt 2 in 2 s"])
        }
        client.disconnectAfterSending()
        await harness.advance(by: .seconds(2))
        do { let got = try await harness.clientEvents.next(2); #expect(got == [refused, "server unavailable"]) }
        await harness.advance(by: .seconds(600))
        await harness.drainEventQueues()
        #expect(harness.clientEvents.pending == [])
        // The numbered message stays in the outbox (and the store) for a later connect.
        #expect(client.deliveryStatus?.outboxCount == 1)
    }
}
