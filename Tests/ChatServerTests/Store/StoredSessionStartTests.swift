@testable import ChatProtocol
@testable import ChatServer
import Foundation
import Testing

/// What a stored session starts with at its login, read off the routing queue
/// (``StoredSessionStart/read(from:record:positions:)``).
@Suite struct StoredSessionStartTests {
    @Test(arguments: StoreKind.allCases)
    func theWindowStartsWhereTheClientOrTheStoreSaysAndEachOtherUsersPositionIsAReceipt(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try store.createUser(named: "cy", passwordHash: nil, at: storeEpoch)
            _ = try store.append([.make("cy", in: .room, id: 1)])  // before ann existed: not hers
            let ann = try store.createUser(named: "ann", passwordHash: nil, at: storeEpoch)
            _ = try store.createUser(named: "bob", passwordHash: nil, at: storeEpoch)
            let annBob = ConversationID(between: "ann", and: "bob")
            let annCy = ConversationID(between: "ann", and: "cy")
            _ = try store.append([
                .make("bob", in: .room, id: 1), .make("cy", in: .room, id: 2), .make("ann", in: annBob, id: 1),
                .make("ann", in: annBob, id: 2), .make("ann", in: annBob, id: 3), .make("cy", in: annCy, id: 3)
            ])
            try store.setPositions([
                (user: "bob", conversation: annBob, sequence: 2), (user: "ann", conversation: annCy, sequence: 1)
            ])
            // The client knows the room up to 2 and ann|bob up to 3; of ann|cy it says nothing.
            let start = try StoredSessionStart.read(from: store, record: ann, positions: ["room": 2, annBob.description: 3])
            #expect(start.description == "\(annBob) 3..3, \(annCy) 1..1, room 2..3")
            #expect(start.receipts == [.init(conversation: annBob.description, upTo: 2, by: "bob")])
            #expect(start.window.nextFetch().map { "\($0.conversation) after \($0.after)" } == "room after 2")
            #expect(start.window.positions == [annBob.description: 3, annCy.description: 1, "room": 2])
        }
    }
}
