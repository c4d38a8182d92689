import AsyncSocket
@testable import ChatServer
import Foundation
import LongLink
import SocketLog
import Testing
import TestSupport

/// The cluster's presence: what the nodes write to and read from the presence and nodes buckets, and
/// what a node's users look like to the others when it dies, loses NATS or comes back. Part of
/// ``ChatClusterTests`` (serialized: each test has its own nats-server and nodes, and two at a time
/// made the whole suite slower).
extension ChatClusterTests {
    @Test func theUsersOfANodeThatDiesGoOfflineOnTheOthersByThemselves() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        let (ann, bob) = try await chat.annAndBob()
        await chat.crash(0)
        // Node 0's key expires after ChatCluster.nodeLifetime; node 1 notices at its next refresh.
        _ = try await bob.received.first(within: .seconds(20)) { $0 == .v2(.presence(name: "ann", online: false)) }
        #expect(chat.nodes[1].onlineUsers == ["bob"])
        withExtendedLifetime(ann) {}  // her connection stays open: only the crash takes her offline
    }

    /// Regression (ChatFailoverTests, once in 100 runs: "Attempted to read an unowned reference but
    /// object … was already destroyed"): a node released without ``ChatServer/stop()`` (the test's
    /// surviving node at its end) left its cluster link's node refresh running, and a refresh under
    /// way when the router went read it. The link holds its router weakly now, and such work does
    /// nothing. Here the link outlives its released server as that refresh did, and refreshes again.
    @Test func aClusterLinkThatOutlivesItsServerDoesNothingWhenItRefreshes() async throws {
        let nats = try await NATSTestServer.start()
        defer { nats.stop() }
        let group = EventLoopGroup(numberOfThreads: 1, name: "late-work")
        defer { group.shutdown() }
        let (link, cluster) = try await runOnAThread {
            var configuration = ChatCluster.Configuration(servers: [nats.natsURL], nodeID: "node-0")
            configuration.prefix = "t" + UUID().uuidString.prefix(8).lowercased()
            let cluster = try ChatCluster(configuration)
            let server = ChatServer(
                host: "127.0.0.1", port: 0, store: cluster.store, passwordHasher: PasswordHasher(limits: .minimum),
                group: group, cluster: cluster)
            try server.start()
            return (server.router.cluster, cluster)
        }
        let outliving = try #require(link)
        defer {
            outliving.stop(removingPresence: false, users: [])
            cluster.close()
        }
        try await waitUntil("the released server's router is gone") { outliving.router == nil }
        // The next refresh (every ChatCluster.nodeRefresh, 2 s), started after the router went, writes
        // the node's key again; on the old link it read the router first. (NATS requests block: on a
        // thread of their own.)
        let refreshed = try await runOnAThread {
            let revision = try cluster.nodes.get("node-0")?.revision ?? 0
            let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(10))
            while ContinuousClock.now < deadline {
                if try (cluster.nodes.get("node-0")?.revision ?? 0) > revision { return true }
                usleep(10_000)
            }
            return false
        }
        #expect(refreshed, "the node refreshed")
        await withCheckedContinuation { done in outliving.outbox.async { outliving.queue.async { done.resume() } } }
        #expect(outliving.router == nil)
    }

    /// A dead node's users leave the presence bucket too, removed by one survivor (the first live node
    /// by id), and every survivor takes them offline. (Every survivor used to check and delete every
    /// key: at 100,000 users that kept NATS busy while those users logged in again.)
    @Test func theFirstLiveNodeRemovesADeadNodesUsersFromThePresenceBucket() async throws {
        let chat = try await ClusterFixture.make(nodes: 3)
        let (ann, bob, cy) = try await chat.annBobAndCy()
        let key = JetStreamMessageStore.key("ann")
        #expect(try chat.clusters[1].presence.get(key) != nil)
        await chat.crash(0)
        try await chat.explained {
            _ = try await bob.received.first(within: .seconds(20)) { $0 == .v2(.presence(name: "ann", online: false)) }
            _ = try await cy.received.first(within: .seconds(20)) { $0 == .v2(.presence(name: "ann", online: false)) }
        }
        try await eventually("ann's key removed") { (try? chat.clusters[1].presence.get(key)) == .some(nil) }
        #expect(chat.nodes[1].onlineUsers == ["bob", "cy"], "\(chat.nodesLog)")
        #expect(chat.nodes[2].onlineUsers == ["bob", "cy"], "\(chat.nodesLog)")
        withExtendedLifetime(ann) {}  // her connection stays open: only the crash takes her offline
    }

    /// The first live node's removal of a dead node's users deletes only the keys that still say the
    /// dead node and token: a user back on another node keeps its key.
    @Test func aDeadNodesUsersKeysAreRemovedUnlessTheyLoggedInElsewhereMeanwhile() async throws {
        let chat = try await ClusterFixture.make(nodes: 1)
        let link = try #require(chat.nodes[0].router.cluster)
        let presence = chat.clusters[0].presence
        let dead = ["u1", "u2", "u3"].map { ClusterLink.Presence(node: "node-x", token: ClusterLink.hash("token-" + $0)) }
        let back = ClusterLink.Presence(node: "node-y", token: ClusterLink.hash("token-u2b"))
        try await runOnAThread {
            for (name, value) in zip(["u1", "u2", "u3"], dead) {
                _ = try presence.put(JetStreamMessageStore.key(name), try JSONEncoder().encode(value))
            }
            _ = try presence.put(JetStreamMessageStore.key("u2"), try JSONEncoder().encode(back))  // u2 logged in again on node-y
            link.outbox.sync {
                link.removeFromBucket(Dictionary(uniqueKeysWithValues: zip(["u1", "u2", "u3"], dead.map { RemoteUser($0) })))
            }
        }
        #expect(try await runOnAThread { try presence.keys() } == [JetStreamMessageStore.key("u2")])
    }

    /// Regression (theFirstLiveNodeRemovesADeadNodesUsersFromThePresenceBucket, 1 fresh-clone run in
    /// 20: a survivor lost cy, who was on the other survivor): a node missing from one listing of the
    /// nodes bucket, while its key was there, was taken for dead, and its users went offline for good
    /// on the node that listed it. Now a node missing from a listing is dead only once a read of its
    /// key finds none.
    @Test func aNodeMissingFromOneListingOfTheNodesBucketKeepsItsUsersOnline() async throws {
        let chat = try await ClusterFixture.make(nodes: 3)
        let (ann, bob, cy) = try await chat.annBobAndCy()
        let link = try #require(chat.nodes[1].router.cluster)
        // A listing without node-2, as a refresh of node 1 might have read it; then everything that
        // follows from it, on the routing queue and the outbox, has run.
        await withCheckedContinuation { done in
            link.queue.async { link.suspectNodes(notIn: ["node-0", "node-1"]) }
            link.queue.async { link.outbox.async { link.queue.async { done.resume() } } }
        }
        #expect(chat.nodes[1].onlineUsers == ["ann", "bob", "cy"], "\(chat.nodesLog)")
        let notice = "node-1 notice: cluster: node node-2 was not listed, but its key is there (or cannot be read): not taken for dead"
        #expect(chat.log.all.contains(notice))
        withExtendedLifetime((ann, bob, cy)) {}
    }

    /// Regression: a login whose presence write failed while NATS stayed connected (a timeout under
    /// load) was written again only at a reconnect, so the other nodes never saw that user online.
    /// Now each node refresh (every ``ChatCluster/nodeRefresh``) writes such users again.
    /// Logins and logouts announced together are written in one batch, in order: the logins between
    /// two logouts as one batch of puts, a logout after its login removes it.
    @Test func loginsAndLogoutsAnnouncedTogetherReachTheBucketInOrder() async throws {
        let chat = try await ClusterFixture.make(nodes: 1)
        let link = try #require(chat.nodes[0].router.cluster)
        link.queue.sync {
            for name in ["u1", "u2", "u3"] { link.announceLogin(name, resumeToken: "token-" + name) }
            link.announceLogout("u2")
            link.announceLogin("u4", resumeToken: "token-u4")
        }
        let presence = chat.clusters[0].presence
        let expected = ["u1", "u3", "u4"].map(JetStreamMessageStore.key).sorted()
        try await eventually("u1, u3 and u4 in the bucket, u2 not") { (try? presence.keys().sorted()) == expected }
        let values = try await runOnAThread {
            try ["u1", "u3", "u4"].map { name in
                try presence.get(JetStreamMessageStore.key(name)).map {
                    try JSONDecoder().decode(ClusterLink.Presence.self, from: $0.value)
                }
            }
        }
        #expect(values == ["u1", "u3", "u4"].map { ClusterLink.Presence(node: "node-0", token: ClusterLink.hash("token-" + $0)) })
        #expect(link.outbox.sync { link.unsynced }.isEmpty)
    }

    /// A login announced just before a graceful stop is written before the stop removes the node's
    /// users, not after (its batch would otherwise have run 5 ms later and left it online).
    @Test func aLoginAnnouncedRightBeforeAStopIsRemovedWithTheOthers() async throws {
        let chat = try await ClusterFixture.make(nodes: 1)
        let link = try #require(chat.nodes[0].router.cluster)
        // The slow part of a stop first (the watch's end waits for NATS), so that the second stop's
        // removal comes well within the 5 ms of the logins' batch.
        await runOnAThread { link.stop(removingPresence: false, users: []) }
        await runOnAThread {
            link.queue.sync {
                link.announceLogin("u1", resumeToken: "token-u1")
                link.announceLogin("u2", resumeToken: "token-u2")
            }
            link.stop(removingPresence: true, users: ["u1", "u2"])
        }
        let presence = chat.clusters[0].presence
        // After the time the batch was due (5 ms after the first login; timers of one queue run in
        // the order of their deadlines): without the stop's flush it wrote both keys by now.
        await withCheckedContinuation { done in link.outbox.asyncAfter(deadline: .now() + .milliseconds(10)) { done.resume() } }
        #expect(try await runOnAThread { try presence.keys() } == [])
    }

    @Test func aPresenceWriteThatFailedIsWrittenAgainAtTheNextNodeRefresh() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        let (ann, bob) = try await chat.annAndBob()
        let link = try #require(chat.nodes[0].router.cluster)
        let key = JetStreamMessageStore.key("ann")
        // As if ann's write had failed: her key is not in the bucket, and her name waits in unsynced.
        // Both on the outbox, so no refresh comes between them.
        try await runOnAThread {
            try link.outbox.sync {
                try chat.clusters[1].presence.delete(key)
                _ = link.unsynced.insert("ann")
            }
        }
        try await eventually("node 1 takes ann offline") { chat.nodes[1].onlineUsers == ["bob"] }
        try await eventually("ann's key written again") {
            let entry = (try? chat.clusters[1].presence.get(key)) ?? nil
            return entry.flatMap { try? JSONDecoder().decode(ClusterLink.Presence.self, from: $0.value) }?.node == "node-0"
        }
        try await eventually("node 1 lists ann again") { chat.nodes[1].onlineUsers == ["ann", "bob"] }
        // Logged after the write, on node 0's outbox: it can come after node 1 has heard of the write.
        let notice = "node-0 notice: cluster: presence written again: 1 users here written, 0 who left removed"
        try await eventually("node 0 logged the write") { chat.log.all.contains(notice) }
        withExtendedLifetime((ann, bob)) {}
    }

    /// Regression: a user who logged out while their node had lost NATS stayed online on the other
    /// nodes for as long as that node lived (it skipped the removal and never made up for it; its own
    /// key kept being written, so the others never dropped its users either).
    @Test func aLogoutDuringANATSOutageReachesTheOtherNodesWhenItIsBack() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        let (ann, bob) = try await chat.annAndBob()
        chat.nats.kill()
        try await eventually("node 0 sees NATS gone") { !chat.clusters[0].isConnected }
        ann.link.disconnect()
        try await eventually("node 0 has ann logged out") { !chat.nodes[0].onlineUsers.contains("ann") }
        try await chat.nats.restart()
        _ = try await bob.received.first(within: .seconds(20)) { $0 == .v2(.presence(name: "ann", online: false)) }
        #expect(chat.nodes[1].onlineUsers == ["bob"])
    }

    /// Regression: after an outage longer than ChatCluster.nodeLifetime, a node that came back first
    /// took the others for dead and removed their users from the bucket, and they stayed offline there
    /// for good. Here the test removes ann's key itself, as such a node does, before NATS goes away.
    @Test func aNodeBackFromANATSOutageWritesItsUsersAgain() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        let ann = chat.peer(on: 0), bob = chat.peer(on: 1)
        _ = try await ann.loggedIn("ann", password: "a")
        try await eventually("node 1 lists ann") { chat.nodes[1].onlineUsers == ["ann"] }
        // bob after that, so that his login shows ann (were he told in a presence tick, her coming and
        // going could fall into one tick, which tells him nothing: PROTOCOL.md "Presence").
        #expect(accepted("bob", online: ["ann"])(try await bob.loggedIn("bob", password: "b")))
        try await runOnAThread { try chat.clusters[1].presence.delete(JetStreamMessageStore.key("ann")) }
        _ = try await bob.received.first { $0 == .v2(.presence(name: "ann", online: false)) }
        chat.nats.kill()
        try await eventually("node 0 sees NATS gone") { !chat.clusters[0].isConnected }
        try await chat.nats.restart()
        _ = try await bob.received.first(within: .seconds(20)) { $0 == .v2(.presence(name: "ann", online: true)) }
        #expect(chat.nodes[1].onlineUsers == ["ann", "bob"])
    }
}
