import AsyncSocket
import Foundation
@testable import LongLink
import Testing

/// The link's state machine on its own: inputs in, exact actions out, timers in virtual time. No
/// socket, loop or queue.
@Suite struct LinkMachineTests {
    static func configuration(
        _ configure: (inout LongLinkClient<TextCodec>.Configuration) -> Void = { _ in }
    ) -> LongLinkClient<TextCodec>.Configuration {
        var configuration = LongLinkClient<TextCodec>.Configuration(host: "127.0.0.1", port: 7000)
        configuration.reconnectSchedule.random = { 0 }
        configure(&configuration)
        return configuration
    }

    /// A rig whose machine has connected to 127.0.0.1:7000 (its actions checked elsewhere).
    static func connected(
        greeting: String? = nil, _ configure: (inout LongLinkClient<TextCodec>.Configuration) -> Void = { _ in }
    ) -> MachineRig<TextCodec> {
        var rig = MachineRig(codec: TextCodec(), configuration: configuration(configure))
        _ = rig.feed(.connect)
        _ = rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: greeting))
        return rig
    }

    static let timersStopped = ["cancel retry", "cancel heartbeat", "cancel acknowledgement", "cancel healthy", "cancel drain"]

    @Test func connectWritesTheGreetingThenTheOfflineQueueThenStartsTheHeartbeat() {
        var rig = MachineRig(codec: TextCodec(), configuration: Self.configuration())
        #expect(rig.feed(.send("early")) == [])
        #expect(rig.feed(.connect) == ["watch network", "connect 127.0.0.1:7000 within 20 s"])
        #expect(rig.machine.state.isConnected == false)
        #expect(rig.feed(.connect) == [])
        #expect(
            rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: "login")) == [
                "write login", "write early #1", "schedule heartbeat in 180 s", "schedule healthy in 180 s", "read",
                "emit connected to 127.0.0.1:7000"
            ])
        #expect(rig.feed(.send("now")) == ["write now #2"])
        #expect(rig.runningTimers == ["heartbeat", "healthy"])
    }

    @Test func heartbeatGoesOutEachIntervalAndSilenceAfterItDropsTheLink() {
        var rig = Self.connected {
            $0.heartbeatInterval = .seconds(10)
            $0.heartbeatAckTimeout = .seconds(2)
        }
        #expect(rig.advance(by: .milliseconds(9999)) == [])
        #expect(rig.advance(by: .milliseconds(1)) == ["write PING", "schedule acknowledgement in 2 s", "schedule heartbeat in 10 s"])
        // Anything at all from the server counts as the answer.
        #expect(rig.advance(by: .milliseconds(1999)) == [])
        #expect(rig.receive("hello") == ["cancel acknowledgement", "emit received hello"])
        #expect(rig.advance(by: .seconds(10)) == ["write PING", "schedule acknowledgement in 2 s", "schedule heartbeat in 10 s"])
        #expect(rig.advance(by: .seconds(2)) == ["close"])
        #expect(rig.machine.isDropping)
        #expect(
            rig.feed(.socketDisconnected(nil))
                == Self.timersStopped + [
                    "emit disconnected (heartbeat timeout)", "schedule reconnect in 0 s", "emit reconnect attempt 1 in 0 s"
                ])
        #expect(rig.advance(by: .zero) == ["connect 127.0.0.1:7000 within 20 s"])
    }

    @Test func failedConnectsFollowTheScheduleThenTheServerIsUnavailable() {
        var rig = MachineRig(codec: TextCodec(), configuration: Self.configuration())
        let failed = "emit connect failed: \(SocketError.connectTimeout)"
        #expect(rig.feed(.connect) == ["watch network", "connect 127.0.0.1:7000 within 20 s"])
        #expect(rig.feed(.connectFailed(.connectTimeout)) == [failed, "schedule reconnect in 0 s", "emit reconnect attempt 1 in 0 s"])
        #expect(rig.advance(by: .zero) == ["connect 127.0.0.1:7000 within 20 s"])
        #expect(rig.feed(.connectFailed(.connectTimeout)) == [failed, "schedule reconnect in 2 s", "emit reconnect attempt 2 in 2 s"])
        #expect(rig.advance(by: .milliseconds(1999)) == [])
        #expect(rig.advance(by: .milliseconds(1)) == ["connect 127.0.0.1:7000 within 20 s"])
        #expect(rig.feed(.connectFailed(.connectTimeout)) == [failed, "schedule reconnect in 4 s", "emit reconnect attempt 3 in 4 s"])
        #expect(rig.advance(by: .seconds(4)) == ["connect 127.0.0.1:7000 within 20 s"])
        #expect(rig.feed(.connectFailed(.connectTimeout)) == [failed, "emit server unavailable"])
        guard case .unavailable = rig.machine.state else {
            Issue.record("not unavailable: \(rig.machine.state)")
            return
        }
        // The app starts over.
        #expect(rig.feed(.connect) == ["watch network", "connect 127.0.0.1:7000 within 20 s"])
    }

    @Test func eachReconnectGoesToTheNextEndpoint() {
        let endpoints = (1...3).map { Endpoint(host: "10.0.0.\($0)", port: 7000) }
        var rig = MachineRig(codec: TextCodec(), configuration: Self.configuration { $0.endpoints = endpoints })
        #expect(rig.feed(.connect) == ["watch network", "connect 10.0.0.1:7000 within 20 s"])
        _ = rig.feed(.socketConnected(host: "10.0.0.1", port: 7000, greeting: nil))
        #expect(
            rig.feed(.socketDisconnected(.closedByPeer))
                == Self.timersStopped + [
                    "emit disconnected (by server)", "schedule reconnect in 0 s", "emit reconnect attempt 1 to 10.0.0.2:7000 in 0 s"
                ])
        #expect(rig.advance(by: .zero) == ["connect 10.0.0.2:7000 within 20 s"])
        #expect(
            rig.feed(.connectFailed(.connectTimeout)) == [
                "emit connect failed: \(SocketError.connectTimeout)", "schedule reconnect in 2 s",
                "emit reconnect attempt 2 to 10.0.0.3:7000 in 2 s"
            ])
    }

    @Test func closingAfterSendingWaitsForTheFinalHeartbeatsAnswer() {
        var rig = Self.connected()
        #expect(rig.feed(.disconnectAfterSending) == ["write PING", "schedule drain in 5 s"])
        #expect(rig.feed(.send("late")) == [])
        #expect(rig.receive("PONG") == ["cancel drain", "close after writing"])
        #expect(
            rig.feed(.socketDisconnected(nil))
                == Self.timersStopped + ["emit disconnected (by user)", "emit send failed (link closed): late"])
        #expect(rig.machine.state.isIdle)
    }

    @Test func closingAfterSendingGivesUpWaitingAfterTheDrainTimeout() {
        var rig = Self.connected()
        #expect(rig.feed(.disconnectAfterSending) == ["write PING", "schedule drain in 5 s"])
        #expect(rig.advance(by: .milliseconds(4999)) == [])
        #expect(rig.advance(by: .milliseconds(1)) == ["cancel drain", "close after writing"])
    }

    @Test func aFullWriteQueueHoldsNewMessagesUntilItDrains() {
        var rig = Self.connected()
        #expect(rig.feed(.writeQueueFull) == [])
        #expect(rig.feed(.send("a")) == [])
        #expect(rig.feed(.send("b")) == [])
        #expect(rig.feed(.writeQueueDrained) == ["write a #1", "write b #2"])
    }

    @Test func theOfflineQueueIsBounded() {
        var rig = MachineRig(codec: TextCodec(), configuration: Self.configuration { $0.offlineQueueLimit = 2 })
        #expect(rig.feed(.send("a")) == [])
        #expect(rig.feed(.send("b")) == [])
        #expect(rig.feed(.send("c")) == ["emit send failed (offline queue full): c"])
    }

    @Test func messagesNotYetWrittenWhenTheConnectionDropsGoOutOnTheNext() {
        var rig = Self.connected()
        #expect(rig.feed(.send("a")) == ["write a #1"])
        #expect(rig.feed(.send("b")) == ["write b #2"])
        #expect(rig.feed(.written(upTo: 1)) == [])
        _ = rig.feed(.socketDisconnected(.closedByPeer))
        #expect(rig.advance(by: .zero) == ["connect 127.0.0.1:7000 within 20 s"])
        #expect(
            rig.feed(.socketConnected(host: "127.0.0.1", port: 7000, greeting: nil)) == [
                "write b #3", "schedule heartbeat in 180 s", "schedule healthy in 180 s", "read", "emit connected to 127.0.0.1:7000"
            ])
    }

    @Test func aNetworkChangeDropsTheConnectionAndReconnectsAtOnce() {
        var rig = Self.connected()
        #expect(rig.feed(.networkChanged(reportedByApp: true)) == ["emit network changed: unknown → unknown", "close"])
        #expect(
            rig.feed(.socketDisconnected(nil))
                == Self.timersStopped + [
                    "emit disconnected (network changed)", "cancel reconnect", "emit reconnect attempt 1 in 0 s",
                    "connect 127.0.0.1:7000 within 20 s"
                ])
    }

    @Test func disconnectingWhileWaitingStopsTheReconnectTimer() {
        var rig = MachineRig(codec: TextCodec(), configuration: Self.configuration())
        _ = rig.feed(.connect)
        _ = rig.feed(.connectFailed(.connectTimeout))
        #expect(rig.runningTimers == ["reconnect"])
        #expect(rig.feed(.disconnect) == ["cancel reconnect"] + Self.timersStopped + ["emit disconnected (by user)"])
        #expect(rig.runningTimers == [])
        // A timer that fired anyway (its cancel raced with it) changes nothing.
        #expect(rig.feed(.timerFired(.reconnect)) == [])
        #expect(rig.feed(.disconnect) == ["cancel reconnect"] + Self.timersStopped)
    }

    @Test func disconnectingWhileConnectedAbandonsTheSocketWithoutReportingItsClose() {
        var rig = Self.connected()
        #expect(
            rig.feed(.disconnect) == ["cancel reconnect", "abandon socket"] + Self.timersStopped + ["emit disconnected (by user)"])
        // A frame from the abandoned socket's last read is not handled.
        #expect(rig.receive("late") == [])
    }

    @Test func anUndecodableFrameIsAProtocolError() {
        var rig = Self.connected()
        #expect(rig.feed(.frame(Data([0xFF, 0xFE]))) == ["close"])
        #expect(
            rig.feed(.socketDisconnected(nil))
                == Self.timersStopped + [
                    "emit disconnected (protocol error: not UTF-8 text)", "schedule reconnect in 0 s", "emit reconnect attempt 1 in 0 s"
                ])
    }
}
