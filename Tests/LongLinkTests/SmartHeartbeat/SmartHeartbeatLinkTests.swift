import AsyncSocket
import Foundation
import LongLink
import Testing
import TestSupport

/// The smart heartbeat through a NAT-like proxy, in virtual time.
@Suite struct SmartHeartbeatLinkTests {
    @Test func convergesFromBelowToAMarginUnderTheLongestIntervalThatWorked() async throws {
        let rig = try SmartLinkRig(nat: .seconds(300))
        try await rig.connect()
        #expect(try await rig.beat() == ["heartbeat after 210 s idle answered"])
        #expect(
            try await rig.beats(untilChanges: 3) == [
                "heartbeat interval 210 s → 270 s (stepped up)", "heartbeat interval 270 s → 330 s (stepped up)",
                "heartbeat interval 330 s → 250 s (backed off)"
            ])
        // Settled: answered from now on, no change, nothing more learned.
        for _ in 0..<3 { #expect(try await rig.beat() == ["heartbeat after 250 s idle answered"]) }
        #expect(rig.store.all["net-a"]?.interval == .seconds(250))
        #expect(rig.store.all["net-a"]?.isSettled == true)
        #expect(rig.proxy.forgottenCount.withLock { $0 } == 2)
    }

    @Test func aFailedProbeReconnectsAndKeepsWhatWasLearned() async throws {
        let rig = try SmartLinkRig(nat: .seconds(300))
        try await rig.connect()
        _ = try await rig.beats(untilChanges: 2)  // at 330 s now
        #expect(
            try await rig.beat() == [
                "heartbeat after 330 s idle failed", "disconnected (heartbeat timeout)", "reconnect attempt 1 in 0 s"
            ])
        #expect(rig.client.currentHeartbeatInterval == .seconds(330))  // one failure: tried again
        #expect(rig.store.all["net-a"]?.failures == 1)
    }

    @Test func convergesFromAboveAfterALearnedIntervalStopsWorking() async throws {
        let store = InMemoryHeartbeatIntervalStore(["net-a": LearnedHeartbeat(interval: .seconds(540), isSettled: true)])
        let rig = try SmartLinkRig(nat: .seconds(300), store: store)
        try await rig.connect()
        #expect(rig.client.currentHeartbeatInterval == .seconds(540))
        #expect(
            try await rig.beats(untilChanges: 4) == [
                "heartbeat interval 540 s → 210 s (probing again)", "heartbeat interval 210 s → 270 s (stepped up)",
                "heartbeat interval 270 s → 330 s (stepped up)", "heartbeat interval 330 s → 250 s (backed off)"
            ])
    }

    @Test func recoversWhenTheNATTimeoutShrinks() async throws {
        let rig = try SmartLinkRig(nat: .seconds(300))
        try await rig.connect()
        _ = try await rig.beats(untilChanges: 3)  // settled at 250 s
        rig.proxy.timeout = .seconds(240)
        #expect(
            try await rig.beats(untilChanges: 3) == [
                "heartbeat interval 250 s → 210 s (probing again)", "heartbeat interval 210 s → 270 s (stepped up)",
                "heartbeat interval 270 s → 210 s (backed off)"
            ])
        for _ in 0..<2 { #expect(try await rig.beat() == ["heartbeat after 210 s idle answered"]) }
    }

    @Test func trafficPutsTheHeartbeatOffSoEachProbeTestsAWholeIdleInterval() async throws {
        let rig = try SmartLinkRig(nat: .seconds(300))
        try await rig.connect()
        await rig.harness.clock.advance(by: .seconds(200))
        rig.client.send("hello")
        #expect(try await rig.harness.clientEvents.next() == "received echo: hello")
        await rig.harness.clock.advance(by: .seconds(209))  // 209 s idle: no heartbeat yet
        rig.harness.drainEventQueues()
        #expect(rig.harness.clientEvents.pending == [])
        await rig.harness.clock.advance(by: .seconds(1))  // 210 s idle
        #expect(try await rig.harness.clientEvents.next() == "heartbeat after 210 s idle answered")
    }

    @Test func eachNetworkKeepsItsOwnInterval() async throws {
        let rig = try SmartLinkRig(nat: .seconds(300))
        try await rig.connect()
        _ = try await rig.beats(untilChanges: 3)  // net-a: 250 s
        rig.network.withLock { $0 = "net-b" }
        rig.proxy.timeout = .seconds(400)
        rig.routes.fire()
        #expect(
            try await rig.harness.clientEvents.next(5) == [
                "network changed: net-a → net-b", "heartbeat interval 250 s → 210 s (learned for this network)",
                "disconnected (network changed)", "reconnect attempt 1 in 0 s", rig.connectedLine
            ])
        #expect(
            try await rig.beats(untilChanges: 5) == [
                "heartbeat interval 210 s → 270 s (stepped up)", "heartbeat interval 270 s → 330 s (stepped up)",
                "heartbeat interval 330 s → 390 s (stepped up)", "heartbeat interval 390 s → 450 s (stepped up)",
                "heartbeat interval 450 s → 370 s (backed off)"
            ])
        rig.network.withLock { $0 = "net-a" }
        rig.proxy.timeout = .seconds(300)
        rig.client.networkDidChange()
        #expect(
            try await rig.harness.clientEvents.next(2) == [
                "network changed: net-b → net-a", "heartbeat interval 370 s → 250 s (learned for this network)"
            ])
        #expect(rig.store.all.mapValues(\.interval) == ["net-a": .seconds(250), "net-b": .seconds(370)])
    }

    @Test func aRouteChangeThatLeavesTheNetworkAsItWasChangesNothing() async throws {
        let rig = try SmartLinkRig(nat: .seconds(300))
        try await rig.connect()
        #expect(rig.routes.starts.withLock { $0 } == 1)
        rig.routes.fire()
        await rig.harness.clock.advance(by: .zero)
        rig.harness.drainEventQueues()
        #expect(rig.harness.clientEvents.pending == [])
        #expect(try await rig.beat() == ["heartbeat after 210 s idle answered"])
    }

    @Test func theAppReportsANetworkChangeOnALinkWithoutASmartHeartbeat() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        defer { server.stop() }
        let client = harness.makeClient(port: server.port)
        defer { client.disconnect() }
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.port)")
        client.send("before")
        #expect(try await harness.clientEvents.next() == "received echo: before")
        client.networkDidChange()
        #expect(
            try await harness.clientEvents.next(4) == [
                "network changed: unknown → unknown", "disconnected (network changed)", "reconnect attempt 1 in 0 s",
                "connected to 127.0.0.1:\(server.port)"
            ])
        client.send("after")
        #expect(try await harness.clientEvents.next() == "received echo: after")
        #expect(client.currentHeartbeatInterval == .seconds(180))
    }

    @Test func aNetworkChangeWhileWaitingToReconnectTriesAgainAtOnce() async throws {
        let harness = LinkHarness()
        let port = ReservedLoopbackPort()
        let client = harness.makeClient(port: port.port) { $0.reconnectDelays = [.seconds(0), .seconds(60)] }
        defer { client.disconnect() }
        client.connect()
        let refused = "connect failed: connect: Connection refused (errno 111)"
        #expect(
            try await harness.clientEvents.next(4) == [
                refused, "reconnect attempt 1 in 0 s", refused, "reconnect attempt 2 in 60 s"
            ])
        client.networkDidChange()  // not 60 s later: now, with the schedule started over
        #expect(
            try await harness.clientEvents.next(4) == [
                "network changed: unknown → unknown", "reconnect attempt 1 in 0 s", refused, "reconnect attempt 2 in 60 s"
            ])
    }
}
