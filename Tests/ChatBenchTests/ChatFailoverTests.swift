import AsyncSocket
import Foundation
import IMChat
import SocketBench
import TestSupport
import Testing
@testable import ChatBench

/// `socket-bench client chat --stored --failover` against two cluster nodes (in-process
/// ``ChatServer``s on one nats-server of the test's own), one of them crashed mid-run: its users log
/// in again on the other, resend what was not stored, and every message still arrives exactly once.
@Suite struct ChatFailoverTests {
    /// Regression: every user of a dead node retried on the same next node, which filled up (at most
    /// 20,000 connections a process here) and turned thousands away for good. Now the users of one
    /// node spread evenly over all the nodes at their first retry, and each user's later attempts go
    /// round every node.
    @Test func theUsersOfOneServerRetryOnEveryServerEvenly() {
        let count = 6
        let usersOfServerZero = (0..<60).map { $0 * count }
        #expect(usersOfServerZero.allSatisfy { LoadRun.serverIndex(user: $0, attempt: 0, count: count) == 0 })
        let firstRetries = Dictionary(grouping: usersOfServerZero) { LoadRun.serverIndex(user: $0, attempt: 1, count: count) }
        #expect(firstRetries.mapValues(\.count) == [0: 10, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10])
        #expect((1...6).map { LoadRun.serverIndex(user: 13, attempt: $0, count: count) } == [4, 5, 0, 1, 2, 3])
        #expect((1...3).map { LoadRun.serverIndex(user: 7, attempt: $0, count: 1) } == [0, 0, 0])
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
        options.directRate = 50
        options.broadcastRate = 0
        options.duration = 3
        options.heartbeat = 1
        options.loginTimeout = 30
        options.drain = 60
        let run = Task.detached { [options] in await runOnAThread { ChatBench.runLoad(options) } }

        // Once node 1 lists all six (every login done, messages about to start), node 0 crashes: no
        // goodbye, its sockets closed, its users left in the presence bucket.
        let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(30))
        while nodes[1].0.onlineUsers.count < 6, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(nodes[1].0.onlineUsers.count == 6)
        nodes[0].0.stop()
        nodes[0].1.close()
        let result = await run.value

        // Everything isClean checks but heartbeatsMissed, which counts answers later than one interval
        // (1 s here): a speed figure on a loaded test machine (the suite beside it), not a correctness
        // one. Every heartbeat on a live connection must have been answered by the end.
        #expect(result.heartbeatsSent == result.heartbeatsAnswered && result.heartbeatsSent > 0, "\(result.summary)")
        #expect(
            result.drained && !result.loginTimedOut && result.misdelivered == 0 && result.unknownIDs == 0 && result.unexpected == 0,
            "\(result.summary)")
        #expect(result.loggedIn == 6 && result.loginFailures == 0 && result.connectionFailures == 0)
        #expect(result.drops == 3 && result.failoverLatency.count == 3 && result.usersAway == 0)
        #expect(result.reconnectAttempts >= 3)
        #expect(result.sentDirect == 150 && result.expected == 150 && result.delivered == 150 && result.missing == 0)
        #expect(result.duplicates == 0 && result.outOfOrder == 0 && result.gaps == 0 && result.errorCount == 0)
        #expect(result.acknowledged == 150 && result.unacknowledged == 0 && result.acknowledgementErrors == 0)
    }
}
