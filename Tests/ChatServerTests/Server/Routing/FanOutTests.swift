@testable import ChatProtocol
@testable import ChatServer
import Foundation
import LongLink
import Testing

/// Who a stored message goes to, planned with no socket and no store.
@Suite struct FanOutTests {
    static let time = Date(timeIntervalSince1970: 1_700_000_000)

    static func message(_ conversation: ConversationID, from sender: String, sequence: UInt64) -> StoredMessage {
        StoredMessage(
            conversation: conversation, sequence: sequence, sender: sender, text: "hi", time: time,
            clientInstance: "i", clientID: 1)
    }

    static func user(_ peer: FakePeer, _ version: ChatProtocolVersion, stored: Bool) -> SessionTable.User {
        SessionTable.User(
            session: peer, resumeToken: "t", version: version, clientInstance: "i",
            window: stored ? DeliveryWindow(positions: ["room": 4], limit: 256) : nil)
    }

    @Test func aBroadcastGoesThroughTheStoredWindowsAndOnceEncodedPerVersionToTheLiveOnesButNotItsLiveSender() {
        let ann = FakePeer(id: 1), bob = FakePeer(id: 2), cy = FakePeer(id: 3), dee = FakePeer(id: 4)
        var users = [
            "ann": Self.user(ann, .v1, stored: false), "bob": Self.user(bob, .v2, stored: true),
            "cy": Self.user(cy, .v1, stored: false), "dee": Self.user(dee, .v2, stored: false)
        ]
        let plan = FanOut.plan(Self.message(.room, from: "ann", sequence: 5), users: &users, storedSessionsOnly: false)
        #expect(plan.windows == ["bob"])
        #expect(plan.live.sorted() == ["cy", "dee"])
        #expect(
            plan.actions.map(\.description)
                == [
                    RouterAction.sendToAll(.delivery(from: "ann", text: "hi", isDirect: false), [cy]),
                    .sendToAll(
                        .v2(.delivery(from: "ann", text: "hi", isDirect: false, conversation: "room", sequence: nil, time: Self.time)),
                        [dee])
                ].map(\.description))
        #expect(users["bob"]?.window?.nextFetch() == DeliveryWindow.Fetch(conversation: "room", after: 4, limit: 1))
    }

    @Test func aDuplicateGoesThroughTheWindowsOnlyAndADirectMessageToOneselfReachesOneself() {
        let ann = FakePeer(id: 1), bob = FakePeer(id: 2)
        var users = ["ann": Self.user(ann, .v1, stored: false), "bob": Self.user(bob, .v2, stored: true)]
        let duplicate = FanOut.plan(Self.message(.room, from: "bob", sequence: 5), users: &users, storedSessionsOnly: true)
        #expect(duplicate.windows == ["bob"] && duplicate.live.isEmpty && duplicate.actions.isEmpty)
        let toSelf = FanOut.plan(
            Self.message(ConversationID(between: "ann", and: "ann"), from: "ann", sequence: 1), users: &users, storedSessionsOnly: false)
        #expect(toSelf.live == ["ann"])
        #expect(
            toSelf.actions.map(\.description) == [
                RouterAction.sendToAll(.delivery(from: "ann", text: "hi", isDirect: true), [ann]).description
            ])
    }
}
