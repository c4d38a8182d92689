import AsyncSocket
import Foundation
@testable import LongLink
import Testing

/// Reliable delivery and the smart heartbeat in the state machine: the machine asks for store calls
/// (``LinkAction/persist(through:then:)``) and never makes one; here the test plays the driver's part.
@Suite struct LinkMachineDeliveryTests {
    let store = InMemoryDeliveryStateStore()
    let delivery: ReliableDelivery<String>
    var rig: MachineRig<NumberedTextCodec>

    init() throws {
        let store = self.store
        delivery = try ReliableDelivery(codec: NumberedTextCodec(), store: store, state: store.load(), limit: 10_000, window: 256)
        delivery.greetingBuilder.withLock { $0 = { NumberedTextCodec.login($0) } }
        var configuration = LongLinkClient<NumberedTextCodec>.Configuration(host: "127.0.0.1", port: 7000)
        configuration.reconnectSchedule.random = { 0 }
        rig = MachineRig(codec: NumberedTextCodec(), configuration: configuration, delivery: delivery)
        _ = rig.feed(.connect)
    }

    /// What the driver does for a send: the id from the loop, the store call, then the outbox.
    mutating func send(_ message: String) -> [String] {
        let next = delivery.nextAdmission
        guard case .admitted(let id, let frame, let numbered) = delivery.prepare(message, id: next.id, outboxFull: next.isFull) else {
            Issue.record("not admitted: \(message)")
            return []
        }
        return rig.feed(.admitted(id: id, frame: frame, message: numbered))
    }

    /// What the driver does for a persist action.
    mutating func persist(through last: UInt64, then: AfterPersist) -> [String] {
        rig.feed(.persisted(delivery.persist(through: last), then: then))
    }

    @Test mutating func theGreetingCarriesThePositionsAndTheOutboxFollows() throws {
        #expect(send("hi") == [])
        #expect(try store.load().outbox.map(\.id) == [1])
        #expect(
            rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: "ignored")) == [
                "write login", "write #1 hi", "schedule heartbeat in 180 s", "schedule healthy in 180 s", "read",
                "emit connected to 127.0.0.1:7000"
            ])
        #expect(send("ho") == ["write #2 ho"])
    }

    @Test mutating func anAnswerLeavesTheOutboxInTheStoreOnlyThroughTheDriver() throws {
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil))
        #expect(send("hi") == ["write #1 hi"])
        #expect(rig.receive("stored 1") == ["flush at the end of the pass", "emit stored #1: #1 hi"])
        #expect(try store.load().outbox.map(\.id) == [1])
        #expect(rig.feed(.flushDue) == ["persist through 1, then acknowledge"])
        #expect(try store.load().outbox.map(\.id) == [1])
        #expect(persist(through: 1, then: .acknowledge) == [])
        #expect(try store.load().outbox.isEmpty)
    }

    @Test mutating func deliveriesOfOnePassAreAcknowledgedOnceAfterTheyArePersisted() throws {
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil))
        #expect(rig.receive("deliver room 1 hi") == ["flush at the end of the pass", "emit received deliver room 1 hi"])
        #expect(rig.receive("deliver room 2 ho") == ["emit received deliver room 2 ho"])
        #expect(rig.receive("deliver room 2 ho") == [])
        #expect(rig.feed(.flushDue) == ["persist through 1, then acknowledge"])
        #expect(try store.load().positions == [:])
        #expect(persist(through: 1, then: .acknowledge) == ["write ack room 2"])
        #expect(try store.load().positions == ["room": 2])
    }

    @Test mutating func anEarlyDeliveryDropsTheLinkWithoutPassingItOn() {
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil))
        // The first delivery of a conversation on a connection may skip what the server no longer has.
        #expect(rig.receive("deliver room 1 x") == ["flush at the end of the pass", "emit received deliver room 1 x"])
        #expect(rig.receive("deliver room 3 z") == ["close"])
        #expect(rig.receive("deliver room 4 w") == [])
        #expect(
            rig.feed(.socketDisconnected(nil)) == LinkMachineTests.timersStopped + [
                "emit disconnected (delivery gap in room: expected 2, received 3)", "schedule reconnect in 0 s",
                "emit reconnect attempt 1 in 0 s"
            ])
    }

    @Test mutating func closingAfterSendingWaitsForTheOutboxAndClosesOnceTheStoreIsUpToDate() {
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil))
        #expect(send("hi") == ["write #1 hi"])
        #expect(rig.feed(.disconnectAfterSending) == ["write PING", "schedule drain in 5 s"])
        #expect(rig.receive("PONG") == [])
        #expect(
            rig.receive("stored 1") == [
                "flush at the end of the pass", "emit stored #1: #1 hi", "cancel drain", "persist through 1, then closeAfterDrain"
            ])
        #expect(rig.feed(.flushDue) == [])
        #expect(persist(through: 1, then: .closeAfterDrain) == ["close after writing"])
    }

    @Test mutating func aRetryAnswerPausesTheOutboxThenResendsFromTheOldest() {
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil))
        #expect(send("a") == ["write #1 a"])
        #expect(rig.receive("busy 1 2") == ["schedule retry in 2 s", "emit received busy 1 2"])
        #expect(send("b") == [])
        #expect(rig.advance(by: .milliseconds(1999)) == [])
        #expect(rig.advance(by: .milliseconds(1)) == ["write #1 a"])
        #expect(rig.receive("stored 1") == ["flush at the end of the pass", "emit stored #1: #1 a", "write #2 b"])
    }

    @Test mutating func disconnectingPersistsWhatIsOwedOffTheLoop() {
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil))
        #expect(rig.receive("deliver room 1 hi") == ["flush at the end of the pass", "emit received deliver room 1 hi"])
        #expect(
            rig.feed(.disconnect) == ["persist through 1, then countFailures", "cancel reconnect", "abandon socket"]
                + LinkMachineTests.timersStopped + ["emit disconnected (by user)"])
        #expect(persist(through: 1, then: .countFailures) == [])
        #expect(delivery.tracker.positions == ["room": 1])
    }
}

/// The smart heartbeat in the state machine: a heartbeat after the learned interval of idleness.
@Suite struct LinkMachineSmartHeartbeatTests {
    @Test func aHeartbeatGoesOutOnlyAfterTheIntervalWithoutTraffic() {
        var smart = SmartHeartbeat()
        smart.store = InMemoryHeartbeatIntervalStore()
        smart.networkIdentifier = { "wifi" }
        smart.networkChanges = nil
        var configuration = LongLinkClient<TextCodec>.Configuration(host: "127.0.0.1", port: 7000)
        configuration.smartHeartbeat = smart
        var rig = MachineRig(codec: TextCodec(), configuration: configuration, smart: smart)
        _ = rig.feed(.connect)
        #expect(
            rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil)) == [
                "schedule heartbeat in 210 s", "schedule healthy in 180 s", "read", "emit connected to 127.0.0.1:7000"
            ])
        #expect(rig.advance(by: .seconds(210)) == ["write PING", "schedule acknowledgement in 30 s", "schedule heartbeat in 210 s"])
        #expect(rig.receive("PONG") == ["cancel acknowledgement", "emit heartbeat after 210 s idle answered"])
        // Traffic puts the next heartbeat off: at 310 s a message, so at 420 s only a new wait.
        #expect(rig.advance(by: .seconds(100)) == [])
        #expect(rig.feed(.send("x")) == ["write x #1"])
        #expect(rig.advance(by: .seconds(110)) == ["schedule heartbeat in 100 s"])
        #expect(rig.advance(by: .seconds(100)) == ["write PING", "schedule acknowledgement in 30 s", "schedule heartbeat in 210 s"])
        // Unanswered: the probe failed, and the link is dropped.
        #expect(rig.advance(by: .seconds(30)) == ["emit heartbeat after 210 s idle failed", "close"])
    }
}
