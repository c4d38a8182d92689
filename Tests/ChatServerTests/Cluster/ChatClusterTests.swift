import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import SocketLog
import Testing
import TestSupport

/// The cluster's delivery: messages, receipts and logins across nodes, and a node without NATS; its
/// presence tests are in ChatClusterPresenceTests.swift. Serialized: each test has its own
/// nats-server and nodes.
@Suite(.serialized) struct ChatClusterTests {
    /// Regression (ChatFailoverTests "delivered 149/150", about 1 run in 4): node 0's append of the
    /// first message between ann and bob failed right after storing it (as on a node whose NATS
    /// requests time out under load, or that crashes there); its retry found it stored and answered
    /// `stored`, but the conversation was never listed as bob's, so bob, logging in on node 1
    /// afterwards, was never sent it. Now the conversation is listed before its first message is
    /// stored, and a head is read from the stream too.
    @Test func aMessageStoredByAnAppendThatStoppedHalfWayReachesItsReaderAtLoginOnAnotherNode() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        struct Stopped: Error {}
        let stopped = LockedValue(false)  // once: the retry works
        chat.clusters[0].store.afterPublish.withLock {
            $0 = { _ in
                let first = stopped.withLock { wasStopped in
                    defer { wasStopped = true }
                    return !wasStopped
                }
                if first { throw Stopped() }
            }
        }
        let bob = chat.peer(on: 1)
        _ = try await bob.loggedIn("bob", password: "b")
        bob.link.disconnect()
        let ann = chat.peer(on: 0)
        _ = try await ann.loggedIn("ann", password: "a")
        ann.send(.directMessage(id: 1, to: "bob", text: "stored, then the append stopped"))
        _ = try await ann.received.first { $0 == .v2(.stored(id: 1, conversation: "direct:ann bob", sequence: 1)) }
        let again = chat.peer(on: 1)
        _ = try await again.loggedIn("bob", password: "b")
        #expect(try await answer(again) == .v2(delivery("ann", "stored, then the append stopped", "direct:ann bob", 1)))
    }

    @Test func aDirectMessageToAUserOnAnotherNodeIsStoredOnceDeliveredInOrderAndReceipted() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        let ann = chat.peer(on: 0), bob = chat.peer(on: 1)
        #expect(accepted("ann")(try await ann.loggedIn("ann", password: "ann's secret")))
        _ = try await bob.loggedIn("bob", password: "bob's secret")
        // ann hears of bob, on the other node, from the presence bucket.
        _ = try await ann.received.first { $0 == .v2(.presence(name: "bob", online: true)) }
        for id in 1...3 { ann.send(.directMessage(id: UInt64(id), to: "bob", text: "hi \(id)")) }
        var toBob: [ChatMessage] = []
        for _ in 1...3 { toBob.append(try await answer(bob)) }
        #expect(toBob == (1...3).map { .v2(delivery("ann", "hi \($0)", "direct:ann bob", UInt64($0))) })
        bob.send(.received(conversation: "direct:ann bob", upTo: 3))
        _ = try await ann.received.first { $0 == .v2(.receipt(conversation: "direct:ann bob", upTo: 3, by: "bob")) }
        #expect(try chat.clusters[1].store.messages(in: .direct("ann", "bob"), after: 0, limit: 10).map(\.text) == ["hi 1", "hi 2", "hi 3"])
        // The path each took, in each node's log (`--log-level trace`).
        let path = chat.log.all.filter { $0.contains("path: direct:ann bob#2 ") }
        #expect(
            path.filter { $0.hasPrefix("node-0 ") } == [
                "node-0 trace: path: direct:ann bob#2 from ann stored here",
                "node-0 trace: path: direct:ann bob#2 in ann's window",
                "node-0 trace: path: direct:ann bob#2 sent to ann"
            ])
        #expect(
            path.filter { $0.hasPrefix("node-1 ") } == [
                "node-1 trace: path: direct:ann bob#2 from ann stored by node-0, from the stream",
                "node-1 trace: path: direct:ann bob#2 in bob's window",
                "node-1 trace: path: direct:ann bob#2 sent to bob"
            ])
    }

    @Test func aBroadcastReachesTheUsersOfEveryNodeOnce() async throws {
        let chat = try await ClusterFixture.make(nodes: 3)
        let peers = [chat.peer(on: 0), chat.peer(on: 1), chat.peer(on: 2)]
        for (index, peer) in peers.enumerated() { _ = try await peer.loggedIn("user\(index)", password: "secret \(index)") }
        // Every node knows everyone before the broadcast (presence across nodes).
        let everyone = ["user0", "user1", "user2"]
        try await eventually("every node lists every user") { chat.nodes.allSatisfy { $0.onlineUsers == everyone } }
        peers[2].send(.broadcast(id: 1, text: "hello all"))
        for peer in peers {
            _ = try await peer.received.first { $0 == .v2(delivery("user2", "hello all", "room", 1)) }
        }
        // Once each: nothing more arrives before a round trip of each peer's own.
        for (index, peer) in peers.enumerated() {
            peer.send(.directMessage(id: 10, to: "user\(index)", text: "to myself"))
            let own = "direct:user\(index) user\(index)"
            #expect(
                try await peer.received.next(2) { if case .v2(.presence) = $0 { false } else { true } }
                    == [.v2(.stored(id: 10, conversation: own, sequence: 1)), .v2(delivery("user\(index)", "to myself", own, 1))])
        }
    }

    @Test func aSecondLoginOnAnotherNodeIsResolvedAsOnOneNode() async throws {
        let chat = try await ClusterFixture.make(nodes: 2)
        let first = chat.peer(on: 0)
        _ = try await first.loggedIn("ann", password: "ann's secret")
        let live = chat.peer(on: 0)
        _ = try await live.loggedIn("cy", password: nil)
        let watcher = chat.peer(on: 1)
        _ = try await watcher.loggedIn("dan", password: nil)
        // Node 1 learns of ann and cy from the presence bucket's watch, some time after their logins:
        // dan's login did not wait for it (the squatter below was accepted, 1 full-suite run in 50).
        try await eventually("node 1 lists ann and cy") { chat.nodes[1].onlineUsers == ["ann", "cy", "dan"] }
        // A live-only login without cy's resume token is refused, as on one node.
        let squatter = chat.peer(on: 1)
        squatter.login("cy", password: nil)
        let refusal = try await answer(squatter)
        guard case .v2(.error(let code, _, _, _)) = refusal else {
            Issue.record("expected a refusal, got \(refusal)")
            return
        }
        #expect(code == .nameTaken)
        // The password takes ann's session over: the old one is told and closed.
        let second = chat.peer(on: 1)
        #expect(accepted("ann", online: ["cy", "dan"])(try await second.loggedIn("ann", password: "ann's secret")))
        _ = try await first.received.first { if case .v2(.error(.replaced, _, _, _)) = $0 { true } else { false } }
        #expect(chat.nodes[1].onlineUsers == ["ann", "cy", "dan"])
    }

    /// Regression (bench-cluster.sh left its nodes running for hours after killing NATS): a node that
    /// shuts down without NATS skips the presence calls that would each wait for their timeout (2 s per
    /// user, twice: at each logout and in the shutdown's own removal).
    @Test func aNodeWithoutNATSShutsDownWithoutWaitingForIt() async throws {
        let chat = try await ClusterFixture.make(nodes: 1)
        var peers: [V2Peer] = []
        for index in 0..<10 {
            let peer = chat.peer(on: 0)
            #expect(
                accepted("u\(index)", online: (0..<index).map { "u\($0)" }, stored: false)(
                    try await peer.loggedIn("u\(index)", password: nil)))
            peers.append(peer)
        }
        chat.nats.kill()
        try await eventually("node 0 sees NATS gone") { !chat.clusters[0].isConnected }
        let summary = EventRecorder<String>()
        chat.nodes[0].shutDown(timeout: .seconds(2)) { summary.record($0.description) }
        #expect(try await summary.next(within: .seconds(8)) == "shutting down: 10 sessions told, 0 messages flushed")
    }

    @Test func withoutNATSMessagesAreRefusedVisiblyAndStoredAgainWhenItIsBack() async throws {
        let chat = try await ClusterFixture.make(nodes: 1)
        let ann = chat.peer(on: 0)
        _ = try await ann.loggedIn("ann", password: "a")
        #expect(chat.nodes[0].isHealthy)  // the web port's /healthz: 200
        ann.send(.broadcast(id: 1, text: "before"))
        #expect(try await answer(ann) == .v2(.stored(id: 1, conversation: "room", sequence: 1)))
        #expect(try await answer(ann) == .v2(delivery("ann", "before", "room", 1)))
        chat.nats.kill()
        ann.send(.broadcast(id: 2, text: "during"))
        let refusal = try await answer(ann)
        guard case .v2(.error(let code, _, let id, _)) = refusal else {
            Issue.record("expected storeUnavailable, got \(refusal)")
            return
        }
        #expect(code == .storeUnavailable && id == 2)
        #expect(chat.nodes[0].metrics.messagesRefused.labels("storeUnavailable").value == 1)
        // /healthz answers 503 once the node knows NATS is gone.
        try await eventually("node 0 unhealthy without NATS") { !chat.nodes[0].isHealthy }
        try await chat.nats.restart()
        // libnats reconnects by itself (every 250 ms); what is sent then is stored.
        let deadline = ContinuousClock.now + TestTiming.hangLimit(.seconds(20))
        while !chat.clusters[0].isConnected && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(chat.nodes[0].isHealthy)
        ann.send(.broadcast(id: 2, text: "during"))
        #expect(try await answer(ann) == .v2(.stored(id: 2, conversation: "room", sequence: 2)))
        #expect(try chat.clusters[0].store.messages(in: .room, after: 0, limit: 10).map(\.text) == ["before", "during"])
    }
}
