import AsyncSocket
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Keep-alive on a server's loop, in virtual time: the loop's one timer per delay
/// (`WebSocketKeepAliveTimers`) still pings each connection at its own deadline, 20 s after it opened
/// (after its last Pong), and fails it with 1011 20 s after an unanswered Ping (the defaults,
/// `WebSocketKeepAlive`).
@Suite struct WebSocketKeepAliveLoopTests {
    /// What the peer reads next after sending a text `probe`: the echo when nothing came before it, else
    /// the frame that did (a Ping, a Close).
    private static func nextFrame(after probe: String, from peer: RawWebSocketPeer) async throws -> String {
        peer.write(RawWebSocketPeer.frame(0x81, Array(probe.utf8)))
        let frame = try await peer.readFrame()
        return "\(String(frame.first, radix: 16)) \(frame.payload)"
    }

    /// Two connections opened 5 s apart: each is pinged at its own 20 s, not at the other's; the one that
    /// answers is pinged again 20 s after its Pong, the one that does not is closed with 1011 at 20 s
    /// after its Ping, not a millisecond before.
    @Test func eachConnectionIsPingedAtItsOwnDeadlineAndClosedAtItsOwnTimeout() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "keepalive-loop")
        defer { group.shutdown() }
        let server = EchoListenerDelegate()
        let listener = try server.start(group: group)
        defer { listener.stop() }
        let first = try await RawWebSocketPeer(port: listener.port)
        defer { first.close() }
        await clock.advance(by: .seconds(5))
        let second = try await RawWebSocketPeer(port: listener.port)
        defer { second.close() }

        await clock.advance(by: .milliseconds(14_999))  // t = 19.999 s
        #expect(try await Self.nextFrame(after: "a", from: first) == "81 [97]")
        await clock.advance(by: .milliseconds(1))  // t = 20 s: the first one's Ping
        #expect(try await Self.nextFrame(after: "b", from: first) == "89 [0, 0, 0, 1]")
        #expect(try await first.readFrame().payload == [98])
        #expect(try await Self.nextFrame(after: "c", from: second) == "81 [99]")
        first.write(RawWebSocketPeer.frame(0x8A, [0, 0, 0, 1]))  // answered
        #expect(try await Self.nextFrame(after: "d", from: first) == "81 [100]")

        await clock.advance(by: .milliseconds(4_999))  // t = 24.999 s
        #expect(try await Self.nextFrame(after: "e", from: second) == "81 [101]")
        await clock.advance(by: .milliseconds(1))  // t = 25 s: the second one's Ping, never answered
        #expect(try await Self.nextFrame(after: "f", from: second) == "89 [0, 0, 0, 1]")
        #expect(try await second.readFrame().payload == [102])

        await clock.advance(by: .milliseconds(14_999))  // t = 39.999 s
        #expect(try await Self.nextFrame(after: "g", from: first) == "81 [103]")
        await clock.advance(by: .milliseconds(1))  // t = 40 s: 20 s after the first one's Pong
        #expect(try await Self.nextFrame(after: "h", from: first) == "89 [0, 0, 0, 2]")
        #expect(try await first.readFrame().payload == [104])

        await clock.advance(by: .milliseconds(4_999))  // t = 44.999 s
        #expect(server.closes.all == [])
        await clock.advance(by: .milliseconds(1))  // t = 45 s: the second one's Pong is 20 s late
        #expect(try await second.readClose() == "1011 keepalive ping timeout")
        #expect(try await server.closes.next(within: TestTiming.hangLimit(.seconds(10))) == "1011 \"keepalive ping timeout\" (not clean)")
        #expect(server.openCount == 1)
    }
}
