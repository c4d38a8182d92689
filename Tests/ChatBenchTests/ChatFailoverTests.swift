import AsyncSocket
import Foundation
import SocketBench
import TestSupport
import Testing
@testable import ChatBench
import ChatServer

/// `socket-bench client chat --stored --failover` against two cluster nodes (in-process
/// ``ChatServer``s on one nats-server of the test's own), one of them crashed mid-run: its users log
/// in again on the other, resend what was not stored, and every message still arrives exactly once.
@Suite struct ChatFailoverTests {
    /// Regression: every user of a dead node retried on the same next node, which filled up (at most
    /// 20,000 connections a process here) and turned thousands away for good. Now the users of one
    /// node spread evenly over all the other nodes at their first retry, and each user's later
    /// attempts go round every node, its own last. (Regression too: 1 in 6 first retried the node
    /// that had just dropped it, and waited 2 s more for its second attempt.)
    @Test func theUsersOfOneServerRetryOnEveryOtherServerEvenly() {
        let count = 6
        let usersOfServerZero = (0..<60).map { $0 * count }
        #expect(usersOfServerZero.allSatisfy { LoadRun.serverIndex(user: $0, attempt: 0, count: count) == 0 })
        let firstRetries = Dictionary(grouping: usersOfServerZero) { LoadRun.serverIndex(user: $0, attempt: 1, count: count) }
        #expect(firstRetries.mapValues(\.count) == [1: 12, 2: 12, 3: 12, 4: 12, 5: 12])
        #expect((1...7).map { LoadRun.serverIndex(user: 13, attempt: $0, count: count) } == [4, 5, 0, 2, 3, 1, 4])
        #expect((1...3).map { LoadRun.serverIndex(user: 7, attempt: $0, count: 1) } == [0, 0, 0])
        #expect((0...4).map { LoadRun.serverIndex(user: 3, attempt: $0, count: 2) } == [1, 0, 1, 0, 1])
    }

    /// Regression: a login again that was never answered (the connection open, the server silent)
    /// left its user away until the end of the run, with no further attempt: under ThreadSanitizer
    /// one user of the crashed node (below) stayed away through a 60 s drain. Now such an attempt fails
    /// after `--login-timeout` and the next server is tried.
    @Test func aLoginAgainThatIsNeverAnsweredFailsAfterTheLoginTimeoutAndTheNextServerIsTried() async throws {
        let store = InMemoryMessageStore()
        func startServer(idleTimeout: Duration) throws -> ChatServer {
            let server = ChatServer(
                host: "127.0.0.1", port: 0, idleTimeout: idleTimeout, store: store, passwordHasher: PasswordHasher(limits: .minimum))
            try server.start()
            return server
        }
        // The first drops the user 2 s after its login (it sends nothing: no heartbeats, no messages),
        // while the run is still sending (for 5 s): no wait in the test decides when. (A test that
        // stopped the first server once it listed the user missed that window: on the suite's busy
        // pool its poll did not run for seconds.)
        let first = try startServer(idleTimeout: TestTiming.hangLimit(.seconds(2)))
        let third = try startServer(idleTimeout: .seconds(360))
        defer { first.stop(); third.stop() }
        // Accepts and keeps every connection, and never answers.
        let silent = RecordingDelegate()
        let silentListener = TCPSocket(delegate: silent, delegateQueue: nil)
        try silentListener.accept(onInterface: "127.0.0.1", port: 0)
        defer { silentListener.disconnect() }

        var options = LoadOptions()
        // The user logs in on the first; its first login again goes to the second, the next to the third.
        options.servers = [first.port, silentListener.localPort, third.port].map { ServerAddress(host: "127.0.0.1", port: $0) }
        options.users = 1
        options.stored = true
        options.failover = true
        options.rates.directRate = 0
        options.rates.broadcastRate = 0
        options.timing.duration = TestTiming.hangTimeout(5)
        options.timing.heartbeat = 0
        // The suite's hang bound, not 2 s: the bound also covers the third server's real login (its
        // store reads and password check on their queues), which took over 2 s once in a loaded full
        // run (a fresh clone's CI at stop 46). Only the silent server must reach it.
        options.timing.loginTimeout = TestTiming.hangTimeout(10)
        options.timing.drain = TestTiming.hangTimeout(30)
        let run = Task.detached { [options] in await runOnAThread { ChatBench.runLoad(options) } }
        let result = await run.value

        #expect(result.drained && result.failover.usersAway == 0 && result.missing == 0, "\(result.summary)")
        #expect(result.failover.drops == 1 && result.failover.failoverLatency.count == 1)
        #expect(result.failover.reconnectAttempts == 2 && result.failover.failedAttempts == 1 && silent.accepted.count == 1)
        #expect(result.failover.failedAttemptReasons.count == 1, "\(result.failover.failedAttemptReasons)")
        let reason = "no login answer within \(Duration.seconds(options.timing.loginTimeout)) from 127.0.0.1:\(silentListener.localPort)"
        #expect(result.failover.failedAttemptReasons.first?.contains(reason) == true, "\(result.failover.failedAttemptReasons)")
    }

    @Test(TestTiming.timeLimit(minutes: 2))
    func aNodeCrashedMidRunLosesNothingAndItsUsersComeBackOnTheOther() async throws {
        let nats = try await NATSTestServer.start()
        defer { nats.stop() }
        let prefix = "b" + UUID().uuidString.prefix(8).lowercased()
        let nodes = try await runOnAThread {
            try (0..<2).map { index -> (ChatServer, ChatCluster) in
                var configuration = ChatCluster.Configuration(servers: [nats.natsURL], nodeID: "node-\(index)")
                configuration.prefix = prefix
                let cluster = try ChatCluster(configuration)
                let server = ChatServer(
                    host: "127.0.0.1", port: 0, store: cluster.store,
                    passwordHasher: PasswordHasher(limits: .minimum), cluster: cluster)
                try server.start()
                return (server, cluster)
            }
        }
        defer { for (server, cluster) in nodes { server.stop(); cluster.close() } }

        var options = LoadOptions()
        options.servers = nodes.map { ServerAddress(host: "127.0.0.1", port: $0.0.port) }
        options.users = 6  // 0, 2, 4 on node 0; 1, 3, 5 on node 1
        options.stored = true
        options.failover = true
        options.rates.directRate = 50
        options.rates.broadcastRate = 0
        options.timing.duration = 3
        options.timing.heartbeat = 1
        options.timing.loginTimeout = 30
        options.timing.drain = 60
        let run = Task.detached { [options] in await runOnAThread { ChatBench.runLoad(options) } }

        // Once node 1 lists all six (every login done, messages about to start), node 0 crashes: no
        // goodbye, its sockets closed, its users left in the presence bucket. The wait and the crash
        // run on a thread of their own, as the run does. Regression: on the cooperative pool, blocked
        // for seconds by another test's blocking NATS close (once in five fresh-clone runs), the wait
        // ended after the run's 3 s of messages and its drain: node 0 went down after the run, and no
        // user saw it go (0 drops, 0 reconnect attempts).
        let listed = await runOnAThread { [nodes] in
            let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(30))
            while nodes[1].0.onlineUsers.count < 6, ContinuousClock.now < deadline { usleep(5_000) }
            let listed = nodes[1].0.onlineUsers.count
            nodes[0].0.stop()
            nodes[0].1.close()
            return listed
        }
        #expect(listed == 6)
        let result = await run.value

        // Everything isClean checks but heartbeatsMissed, which counts answers later than one interval
        // (1 s here): a speed figure on a loaded test machine (the suite beside it), not a correctness
        // one. Every heartbeat on a live connection must have been answered by the end.
        #expect(
            result.heartbeats.heartbeatsSent == result.heartbeats.heartbeatsAnswered && result.heartbeats.heartbeatsSent > 0,
            "\(result.summary)")
        #expect(
            result.drained && !result.logins.loginTimedOut && result.deliveries.misdelivered == 0 && result.deliveries.unknownIDs == 0
                && result.answers.unexpected == 0,
            "\(result.summary)")
        #expect(result.logins.loggedIn == 6 && result.logins.loginFailures == 0 && result.failures.connectionFailures == 0)
        #expect(result.failover.drops == 3 && result.failover.failoverLatency.count == 3 && result.failover.usersAway == 0)
        #expect(result.failover.reconnectAttempts >= 3)
        #expect(
            result.traffic.sentDirect == 150 && result.deliveries.expected == 150 && result.deliveries.delivered == 150
                && result.missing == 0)
        #expect(
            result.deliveries.duplicates == 0 && result.deliveries.outOfOrder == 0 && result.deliveries.gaps == 0 && result.errorCount == 0)
        #expect(result.answers.acknowledged == 150 && result.answers.unacknowledged == 0 && result.answers.acknowledgementErrors == 0)
    }
}
