import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import SocketLog
import Testing
import TestSupport

/// Nodes of one chat on one nats-server of the test's own (``NATSTestServer``), each an in-process
/// ``ChatServer`` with its ``ChatCluster`` (names under a prefix of its own), and version 2 peers on them.
final class ClusterFixture: Sendable {
    let nats: ServerProcess
    let prefix = "t" + UUID().uuidString.prefix(8).lowercased()
    let clusters: [ChatCluster]
    let nodes: [ChatServer]
    let group = EventLoopGroup(numberOfThreads: 1, name: "cluster-fixture")
    /// Every node's operator log from `trace` up, each line starting with the node's id: what
    /// ``explained(_:)`` adds to a failure.
    let log = EventRecorder<String>()

    /// Starts nats-server and the nodes (their NATS set-up blocks: on a thread of its own).
    static func make(nodes count: Int) async throws -> ClusterFixture {
        let nats = try await NATSTestServer.start()
        return try await runOnAThread { try ClusterFixture(nats: nats, nodes: count) }
    }

    private init(nats: ServerProcess, nodes count: Int) throws {
        self.nats = nats
        var clusters: [ChatCluster] = []
        var nodes: [ChatServer] = []
        for index in 0..<count {
            var configuration = ChatCluster.Configuration(servers: [nats.natsURL], nodeID: "node-\(index)")
            configuration.prefix = prefix
            let cluster = try ChatCluster(configuration)
            var handler = RecordingLogHandler { [log] level, text in log.record("node-\(index) \(level): \(text)") }
            handler.logLevel = .trace
            let server = ChatServer(
                host: "127.0.0.1", port: 0, store: cluster.store, passwordHasher: PasswordHasher(limits: .minimum),
                limits: ChatFixture.testLimits, group: group, logger: Logger(label: "node-\(index)", handler: handler),
                cluster: cluster)
            try server.start()
            clusters.append(cluster)
            nodes.append(server)
        }
        self.clusters = clusters
        self.nodes = nodes
    }

    func peer(on node: Int) -> V2Peer { V2Peer(port: nodes[node].port, group: group) }

    /// Runs `body`; an error it throws comes back with the nodes' log appended, so a wait that timed out
    /// says what the cluster did meanwhile.
    func explained<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw WaitTimedOut(description: "\(error)\n\(nodesLog)")
        }
    }

    /// "the nodes' log:" and every line of ``log``, for a failure message.
    var nodesLog: String { "the nodes' log:\n" + log.all.joined(separator: "\n") }

    /// Stops node `index` as a crash would: no goodbye, its users left in the presence bucket.
    /// Its NATS connection goes first: stopping the server first closed its sessions, and their logouts
    /// reached the presence bucket before the connection closed (about one full-suite run in ten), so
    /// the survivors saw ordinary logouts instead of a dead node's users.
    ///
    /// On a thread of its own: closing the NATS connection while the node's presence watch is still
    /// open blocks for up to the connection's timeout (2 s; see `NATSConnection.close()`). On the
    /// cooperative pool that held one of its two threads, and with another test's blocking call on
    /// the other, every await in the suite waited (the stall watchdog's report, and
    /// ``ChatFailoverTests`` missing its crash, once in five fresh-clone runs).
    func crash(_ index: Int) async {
        await runOnAThread { [clusters, nodes] in
            clusters[index].close()
            nodes[index].stop()
        }
    }

    deinit {
        for node in nodes { node.stop() }
        for cluster in clusters { cluster.close() }
        group.shutdown()
        nats.stop()
    }
}

/// Waits (polling every 20 ms, at most `limit`) until `condition` holds; records an issue if it never does.
func eventually(within limit: Duration = .seconds(10), _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + TestTiming.hangLimit(limit)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("not within \(limit): \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

extension ClusterFixture {
    /// ann (password "a") logged in on node 0 and bob ("b") on node 1, once node 1 lists them both.
    func annAndBob() async throws -> (ann: V2Peer, bob: V2Peer) {
        let ann = peer(on: 0), bob = peer(on: 1)
        _ = try await ann.loggedIn("ann", password: "a")
        _ = try await bob.loggedIn("bob", password: "b")
        try await eventually("node 1 lists ann") { nodes[1].onlineUsers == ["ann", "bob"] }
        return (ann, bob)
    }

    /// ``annAndBob()`` on three nodes, and cy ("c") on node 2, once nodes 1 and 2 list all three.
    func annBobAndCy() async throws -> (ann: V2Peer, bob: V2Peer, cy: V2Peer) {
        let (ann, bob) = try await annAndBob()
        let cy = peer(on: 2)
        _ = try await cy.loggedIn("cy", password: "c")
        try await eventually("nodes 1 and 2 list cy") { nodes[1...2].allSatisfy { $0.onlineUsers == ["ann", "bob", "cy"] } }
        return (ann, bob, cy)
    }
}

/// The next message of `peer` that is not presence news.
func answer(_ peer: V2Peer) async throws -> ChatMessage {
    try await peer.received.first { if case .v2(.presence) = $0 { false } else if case .v2(.presenceChanges) = $0 { false } else { true } }
}
