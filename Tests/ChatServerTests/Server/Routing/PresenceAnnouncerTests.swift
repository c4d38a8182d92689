@testable import ChatProtocol
@testable import ChatServer
import Testing

/// What a presence tick sends, computed as actions: no socket, no queue.
@Suite struct PresenceAnnouncerTests {
    static func user(_ peer: FakePeer, _ version: ChatProtocolVersion, batched: Bool = false, seen: UInt64) -> SessionTable.User {
        SessionTable.User(
            session: peer, resumeToken: "t\(peer.id)", version: version, clientInstance: "i", window: nil,
            presenceChanges: batched, presenceSeen: seen)
    }

    @Test func eachSessionGetsTheChangesItHasNotSeenInItsOwnForm() {
        var board = PresenceBoard()
        board.loggedIn("ann")  // event 1
        board.loggedIn("bob")  // event 2
        let tick = board.takeTick(listed: 100, legacy: 20)
        let v1 = FakePeer(id: 1), batched = FakePeer(id: 2), v2 = FakePeer(id: 3)
        let users = [
            Self.user(v1, .v1, seen: 0), Self.user(batched, .v2, batched: true, seen: 2), Self.user(v2, .v2, seen: 1)
        ]
        let actions = PresenceAnnouncer.announce(tick, onlineCount: 2, to: users).map(\.description)
        #expect(
            actions
                == [
                    RouterAction.sendToAll(
                        .v2(.presenceChanges(online: ["ann", "bob"], offline: [], onlineCount: 2, unlisted: 0)), [batched]),
                    .sendToAll(.presence(name: "ann", online: true), [v1]),
                    .sendToAll(.presence(name: "bob", online: true), [v1]),
                    .sendToAll(.v2(.presence(name: "bob", online: true)), [v2])
                ].map(\.description))
    }

    @Test func aChangeThatCancelledOutGoesOnlyToWhoLoggedInBetween() {
        var board = PresenceBoard()
        board.loggedIn("cy")  // event 1
        board.loggedOut("cy")  // event 2
        let tick = board.takeTick(listed: 100, legacy: 20)
        let between = FakePeer(id: 1), batchedBetween = FakePeer(id: 2), before = FakePeer(id: 3)
        let users = [
            Self.user(between, .v1, seen: 1), Self.user(batchedBetween, .v2, batched: true, seen: 1), Self.user(before, .v2, seen: 0)
        ]
        let actions = PresenceAnnouncer.announce(tick, onlineCount: 0, to: users).map(\.description)
        #expect(
            actions
                == [
                    RouterAction.send(.presence(name: "cy", online: false), to: between),
                    .send(.v2(.presenceChanges(online: [], offline: ["cy"], onlineCount: 0, unlisted: 0)), to: batchedBetween)
                ].map(\.description))
    }

    @Test func aTickWithoutChangesSendsNothing() {
        var board = PresenceBoard()
        let tick = board.takeTick(listed: 100, legacy: 20)
        #expect(PresenceAnnouncer.announce(tick, onlineCount: 0, to: [Self.user(FakePeer(id: 1), .v1, seen: 0)]).isEmpty)
    }
}
