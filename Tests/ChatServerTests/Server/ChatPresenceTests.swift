import AsyncSocket
@testable import ChatProtocol
import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

@Suite struct ChatPresenceTests {
    /// 500 logins, then 250 logouts, each within one tick: every session that asked for batches gets
    /// exactly one `presenceChanges` per tick (2 frames in all, not 749), listing the first 100 names.
    @Test(.cpuBound) func aCrowdCostsEachBatchedSessionOneFramePerTick() async throws {
        let chat = try PresenceFixture()
        let crowd = names(1...500)
        let peers = crowd.map { chat.v2($0, batches: true) }
        for peer in peers { try await peer.acceptedLogin() }
        chat.server.flushPresence()
        let arrived = ChatMessageV2.presenceChanges(online: names(1...100), offline: [], onlineCount: 500, unlisted: 400)
        for (name, peer) in zip(crowd, peers) { #expect(try await peer.drain() == [arrived], "\(name)") }

        let leaving = crowd.indices.filter { $0 % 2 == 0 }  // u001, u003, …
        for index in leaving { peers[index].link.disconnect() }
        try await chat.logouts(leaving.count)
        chat.server.flushPresence()
        let left = ChatMessageV2.presenceChanges(
            online: [], offline: leaving.prefix(100).map { crowd[$0] }, onlineCount: 250,
            unlisted: 150)
        for index in crowd.indices where index % 2 == 1 {
            #expect(try await peers[index].drain() == [left], "\(crowd[index])")
        }
        // A tick with nothing new sends nothing.
        chat.server.flushPresence()
        #expect(try await peers[1].drain() == [])
    }

    /// A login and a logout of one name within a tick are announced to nobody; a session that does not
    /// ask for batches gets single presence messages, in its version.
    @Test func changesThatCancelOutWithinATickAreNotAnnounced() async throws {
        let chat = try PresenceFixture()
        let ann = try await chat.loggedIn("ann", batches: true)
        let lee = try await chat.loggedIn("lee", batches: false)
        let vic = try await chat.v1("vic")
        chat.server.flushPresence()
        #expect(try await ann.drain() == [.presenceChanges(online: ["ann", "lee", "vic"], offline: [], onlineCount: 3, unlisted: 0)])
        #expect(try await lee.drain() == [.presence(name: "vic", online: true)])  // ann and itself came before its login
        #expect(try await vic.drain() == [])

        let bob = try await chat.loggedIn("bob", batches: true)
        bob.link.disconnect()
        try await chat.logouts(1)
        let carl = try await chat.loggedIn("carl", batches: false)
        defer { withExtendedLifetime(carl) {} }
        chat.server.flushPresence()
        #expect(try await ann.drain() == [.presenceChanges(online: ["carl"], offline: [], onlineCount: 4, unlisted: 0)])
        #expect(try await lee.drain() == [.presence(name: "carl", online: true)])
        #expect(try await vic.drain() == [.presence(name: "carl", online: true)])
    }

    /// Regression (found by ChatClusterTests: a dead node's user announced online, then offline, within
    /// one tick): a session that logged in between a login and a logout that cancel out saw the name
    /// online in its login reply, so it is told it went offline; the others hear nothing of it.
    @Test func aSessionThatLoggedInBetweenChangesThatCancelOutIsToldTheStateNow() async throws {
        let chat = try PresenceFixture()
        let ann = try await chat.loggedIn("ann", batches: true)
        chat.server.flushPresence()
        #expect(try await ann.drain() == [.presenceChanges(online: ["ann"], offline: [], onlineCount: 1, unlisted: 0)])

        let bob = try await chat.loggedIn("bob", batches: true)
        let carl = V2Peer(port: chat.server.port, group: chat.group)
        carl.send(
            .login(
                name: "carl", password: nil, resumeToken: nil, clientInstance: String(repeating: "cd", count: 16),
                positions: [:], presenceChanges: true))
        let answer = try await carl.next()
        guard case .loginAccepted("carl", let online, let count, _, false) = answer else {
            Issue.record("carl's login answered \(String(describing: answer))")
            return
        }
        #expect(online == ["ann", "bob"] && count == 2)  // the others
        let lee = try await chat.loggedIn("lee", batches: false)
        bob.link.disconnect()
        try await chat.logouts(1)
        chat.server.flushPresence()
        #expect(
            try await carl.drain() == [
                .presenceChanges(online: [], offline: ["bob"], onlineCount: 3, unlisted: 0),
                .presenceChanges(online: ["carl", "lee"], offline: [], onlineCount: 3, unlisted: 0)
            ])
        #expect(try await lee.drain() == [.presence(name: "bob", online: false)])
        #expect(try await ann.drain() == [.presenceChanges(online: ["carl", "lee"], offline: [], onlineCount: 3, unlisted: 0)])
    }

    /// Sessions without batches get at most 20 single presence messages per tick: the first 20 changed
    /// names in order; the rest of a crowded tick is not announced to them. Changes a login reply
    /// already showed (the session's own login included) are not announced to that session.
    @Test func sessionsWithoutBatchesGetAtMostTwentyPresenceMessagesPerTick() async throws {
        let chat = try PresenceFixture()
        let ann = try await chat.loggedIn("ann", batches: true)
        let lee = try await chat.loggedIn("lee", batches: false)
        let vic = try await chat.v1("vic")
        chat.server.flushPresence()
        _ = try await ann.drain()
        _ = try await lee.drain()
        let crowd = names(1...30)
        let peers = crowd.map { chat.v2($0, batches: true) }
        defer { withExtendedLifetime(peers) {} }
        for peer in peers { try await peer.acceptedLogin() }
        let zoe = try await chat.v1("zoe")  // after the crowd: its login reply showed all of it
        chat.server.flushPresence()
        let first20 = names(1...20)
        #expect(try await vic.drain() == first20.map { .presence(name: $0, online: true) })
        #expect(try await lee.drain() == first20.map { .presence(name: $0, online: true) })
        #expect(try await zoe.drain() == [])
        #expect(try await ann.drain() == [.presenceChanges(online: crowd + ["zoe"], offline: [], onlineCount: 34, unlisted: 0)])
        chat.server.flushPresence()
        #expect(try await vic.drain() == [])
        #expect(try await lee.drain() == [])
    }

    @Test func whoPagesThroughTheUsersOnlineInOrder() async throws {
        let chat = try PresenceFixture()
        let ann = try await chat.loggedIn("ann", batches: false)
        defer { withExtendedLifetime(ann) {} }
        let peers = names(1...250).map { chat.v2($0, batches: false) }
        defer { withExtendedLifetime(peers) {} }
        for peer in peers { try await peer.acceptedLogin() }
        let asker = peers[41]
        #expect(try await asker.who(after: nil, limit: 100) == .onlineUsers(names: ["ann"] + names(1...99), onlineCount: 251, more: true))
        #expect(try await asker.who(after: "u099", limit: 100) == .onlineUsers(names: names(100...199), onlineCount: 251, more: true))
        #expect(try await asker.who(after: "u199", limit: 100) == .onlineUsers(names: names(200...250), onlineCount: 251, more: false))
        // After a name nobody has: from the next one ("u1005" sorts between u100 and u101).
        #expect(try await asker.who(after: "u1005", limit: 3) == .onlineUsers(names: names(101...103), onlineCount: 251, more: true))
        #expect(try await asker.who(after: "u250", limit: 3) == .onlineUsers(names: [], onlineCount: 251, more: false))
        // Only after a login.
        let newcomer = V2Peer(port: chat.server.port, group: chat.group)
        #expect(
            try await newcomer.who(after: nil, limit: 5) == .error(code: .notLoggedIn, detail: "log in first", id: nil, retryAfter: nil))
    }

    /// With the real ticker: a direct message between two users while 300 others log in arrives, and
    /// the batches add up to the 300 logins.
    @Test(.cpuBound) func aDirectMessageGetsThroughWhileACrowdLogsIn() async throws {
        let chat = try PresenceFixture(presenceInterval: ChatServer.defaultPresenceInterval)
        let ann = try await chat.loggedIn("ann", batches: true)
        let bob = try await chat.loggedIn("bob", batches: true)
        let crowd = names(1...300).map { chat.v2($0, batches: false) }
        defer { withExtendedLifetime(crowd) {} }
        ann.send(.directMessage(id: 1, to: "bob", text: "still there?"))
        let delivered = try await bob.received.first(within: .seconds(60)) { if case .v2(.delivery) = $0 { true } else { false } }
        #expect(delivered == .v2(delivery("ann", "still there?", "direct:ann bob", nil)))
        for peer in crowd { try await peer.acceptedLogin() }
        var announced = 0, frames = 0
        while announced < 300 {
            let message = try await ann.received.next(within: .seconds(60))
            guard case .v2(.presenceChanges(let online, let offline, _, let unlisted)) = message else { continue }
            frames += 1
            announced += online.filter { $0 != "bob" && $0 != "ann" }.count + offline.count + unlisted
        }
        #expect(announced == 300)
        #expect(frames >= 1)
    }
}
