import AsyncSocket
import Foundation
import Testing
import TestSupport
@testable import SocketBench

/// The timers behind a million idle connections (issue 35 §1, docs/BENCHMARKS.md "Issue 35 §1"): what
/// a tick costs must not grow with the connections. The LP4 echo server holds no timer at all (no read
/// or write of it has a timeout; the client checks the heartbeats), and the idle load generator holds one
/// timer per event loop whatever its connections: a tick walks only the connections whose heartbeat is
/// due, in the order they fall due.
@Suite struct IdleTimerTests {
    /// One timer on the loop after the heartbeat clock starts, for 1 connection as for 2,000 (none of
    /// them connected: the heartbeats are skipped, the clock is what is counted).
    @Test(arguments: [1, 2_000])
    func theIdleClientHoldsOneTimerPerLoop(connections: Int) {
        let group = EventLoopGroup(numberOfThreads: 1, name: "idle-timer-test")
        var options = ClientOptions(mode: .idle)
        options.connections = connections
        let loop = LoopState(
            eventLoop: group.loops[0], index: 0, loopCount: 1, options: options, pattern: FramePattern(payloadSize: options.size))
        let connector = Connector(host: "127.0.0.1", port: 9, spreadSources: false)
        loop.connections = (0..<connections).map { BenchConnection(id: $0, loop: loop, connector: connector, group: group) }
        let now = MonotonicClock.now()
        let schedule = RunSchedule(go: now, measureStart: now, measureEnd: now + 3_600_000_000_000)
        let timers = loop.eventLoop.runAndWait {
            loop.start(schedule)
            return loop.eventLoop.pendingTimerCount
        }
        #expect(timers == 1)
        group.shutdown()
        withExtendedLifetime((loop, connector)) {}
    }

    /// 20 connections open and echoed once each: the server's loop holds no timer.
    @Test func theEchoServerHoldsNoTimerPerConnection() async throws {
        let server = EchoServer(mode: .lp4, loops: 1)
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }
        var clients: [TCPConnection] = []
        let limit = Duration.seconds(TestTiming.hangTimeout(10))
        let frame = Data([0, 0, 0, 4, 1, 2, 3, 4])
        for _ in 0..<20 {
            let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: limit)
            try await client.write(frame, timeout: limit)
            #expect(try await client.read(exactly: frame.count, timeout: limit) == frame)
            clients.append(client)
        }
        #expect(server.loopTimerCounts == [0])
        for client in clients { await client.close() }
    }
}
