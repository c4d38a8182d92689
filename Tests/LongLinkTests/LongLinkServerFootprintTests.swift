import AsyncSocket
import Dispatch
import Foundation
@testable import LongLink
import Testing
import TestSupport

/// What an idle session costs the server beyond its socket (issue 35 §2: ≤ 2 KiB per logged-in idle
/// chat user): tested by its structure, not by RSS (docs/TESTING.md "Rules").
@Suite struct LongLinkServerFootprintTests {
    /// Regression: every session held a loop timer of its own for its idle timeout (a `Scheduled`, a
    /// timer-heap entry and a closure: ~150 B, three heap blocks). The sessions of one loop now share
    /// one: three idle sessions hold one loop timer, and each is still dropped at its own last frame plus
    /// the timeout, not a millisecond early.
    @Test func idleSessionsOnALoopShareOneTimerAndEachIsDroppedAtItsOwnDeadline() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(idleTimeout: .seconds(10))
        defer { server.stop() }
        // Raw sockets on another group: the harness's loop holds the server's timers only.
        let peers = (0..<3).map { _ in RecordingDelegate() }
        let sockets = peers.enumerated().map { index, peer in
            TCPSocket(delegate: peer, delegateQueue: DispatchQueue(label: "peer \(index)"))
        }
        defer { for socket in sockets { socket.disconnect() } }
        for socket in sockets { try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5) }
        #expect(try await harness.serverEvents.next(3) == ["opened", "opened", "opened"])
        await harness.settle()
        let loop = harness.group.next()
        #expect(loop.runAndWait { loop.pendingTimerCount } == 1)
        await harness.advance(by: .seconds(4))
        sockets[1].write(TextCodec.frame("hi"), withTimeout: -1, tag: 0)
        #expect(try await harness.serverEvents.next() == "received hi")
        #expect(loop.runAndWait { loop.pendingTimerCount } == 1)
        await harness.advance(by: .milliseconds(5_999))
        #expect(harness.serverEvents.pending == [])
        await harness.advance(by: .milliseconds(1))
        #expect(try await harness.serverEvents.next(2) == ["closed (idle timeout)", "closed (idle timeout)"])
        #expect(server.sessions.count == 1)
        await harness.advance(by: .milliseconds(3_999))
        #expect(harness.serverEvents.pending == [])
        await harness.advance(by: .milliseconds(1))
        #expect(try await harness.serverEvents.next() == "closed (idle timeout)")
        #expect(server.sessions.isEmpty)
        #expect(loop.runAndWait { loop.pendingTimerCount } == 0)
    }
}
