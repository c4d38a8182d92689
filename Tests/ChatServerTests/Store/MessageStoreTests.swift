@testable import ChatProtocol
@testable import ChatSQLite
@testable import ChatServer
import Foundation
import Testing

/// The ``MessageStore`` contract, run against ``InMemoryMessageStore`` and ``SQLiteMessageStore`` alike.
@Suite struct MessageStoreTests {
    let annBob = ConversationID(between: "bob", and: "ann")
    let annCy = ConversationID(between: "ann", and: "cy")

    func users(_ names: String..., in store: any MessageStore) throws {
        for name in names { _ = try store.createUser(named: name, passwordHash: nil, at: storeEpoch) }
    }

    @Test(arguments: StoreKind.allCases)
    func sequencesCountFromOnePerConversationWithoutGaps(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", "bob", "cy", in: store)
            let first = try store.append([
                .make("ann", in: .room, id: 1), .make("ann", in: annBob, id: 2), .make("bob", in: .room, id: 1),
                .make("bob", in: annBob, id: 2), .make("cy", in: annCy, id: 1)
            ])
            #expect(first == [.stored(sequence: 1), .stored(sequence: 1), .stored(sequence: 2), .stored(sequence: 2), .stored(sequence: 1)])
            #expect(try store.append([.make("cy", in: .room, id: 2)]) == [.stored(sequence: 3)])
            #expect(try store.head(of: .room) == 3)
            #expect(try store.head(of: annBob) == 2)
            #expect(try store.head(of: annCy) == 1)
            #expect(try store.head(of: ConversationID(between: "bob", and: "cy")) == 0)
            #expect(
                try store.messages(in: .room, after: 0, limit: 10) == [
                    StoredMessage(
                        conversation: .room, sequence: 1, sender: "ann", text: "ann #1", time: storeEpoch,
                        clientInstance: String(repeating: "a", count: 32), clientID: 1),
                    StoredMessage(
                        conversation: .room, sequence: 2, sender: "bob", text: "bob #1", time: storeEpoch,
                        clientInstance: String(repeating: "a", count: 32), clientID: 1),
                    StoredMessage(
                        conversation: .room, sequence: 3, sender: "cy", text: "cy #2", time: storeEpoch,
                        clientInstance: String(repeating: "a", count: 32), clientID: 2)
                ])
            #expect(try store.append([]) == [])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aResendIsADuplicateWithTheOriginalSequence(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", "bob", in: store)
            #expect(
                try store.append([.make("ann", in: annBob, id: 1), .make("ann", in: annBob, id: 2)]) == [
                    .stored(sequence: 1), .stored(sequence: 2)
                ])
            #expect(try store.append([.make("ann", in: annBob, id: 1, text: "resent")]) == [.duplicate(sequence: 1)])
            // Within one batch, too.
            #expect(
                try store.append([.make("ann", in: annBob, id: 3), .make("ann", in: annBob, id: 3)]) == [
                    .stored(sequence: 3), .duplicate(sequence: 3)
                ])
            // The same id from another client instance, or from another sender, is another message.
            let other = String(repeating: "b", count: 32)
            #expect(
                try store.append([.make("ann", in: annBob, id: 1, instance: other), .make("bob", in: annBob, id: 1)]) == [
                    .stored(sequence: 4), .stored(sequence: 5)
                ])
            #expect(try store.head(of: annBob) == 5)
            #expect(try store.messages(in: annBob, after: 0, limit: 10).map(\.text) == ["ann #1", "ann #2", "ann #3", "ann #1", "bob #1"])
            // Client ids use all 64 bits.
            #expect(
                try store.append([.make("ann", in: .room, id: .max), .make("ann", in: .room, id: .max)]) == [
                    .stored(sequence: 1), .duplicate(sequence: 1)
                ])
            #expect(try store.lastMessages(in: .room, limit: 1).map(\.clientID) == [.max])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchIsOneTransactionSoAFailingBatchStoresNothing(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", "bob", "cy", in: store)
            let valid: [NewMessage] = [.make("ann", in: .room, id: 1), .make("ann", in: annBob, id: 2)]
            #expect(throws: StoreError.unknownUser("zed")) { try store.append(valid + [.make("zed", in: .room, id: 1)]) }
            #expect(throws: StoreError.unknownUser("zed")) {
                try store.append(valid + [.make("ann", in: ConversationID(between: "ann", and: "zed"), id: 3)])
            }
            #expect(throws: StoreError.notAMember(sender: "ann", conversation: .direct("bob", "cy"))) {
                try store.append(valid + [.make("ann", in: ConversationID(between: "bob", and: "cy"), id: 3)])
            }
            #expect(throws: StoreError.invalidConversation(.direct("bob", "ann"))) {
                try store.append(valid + [.make("ann", in: .direct("bob", "ann"), id: 3)])
            }
            #expect(try store.head(of: .room) == 0)
            #expect(try store.head(of: annBob) == 0)
            #expect(try store.messages(in: .room, after: 0, limit: 10) == [])
            #expect(try store.directConversations(of: "ann") == [])
            // No sequence was used up, no id remembered.
            #expect(try store.append(valid) == [.stored(sequence: 1), .stored(sequence: 1)])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func positionsNeverMoveBackwardsNorPastTheHead(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", "bob", in: store)
            _ = try store.append((1...5).map { .make("ann", in: annBob, id: $0) })
            #expect(try store.position(of: "bob", in: annBob) == 0)
            try store.setPositions([(user: "bob", conversation: annBob, sequence: 3)])
            #expect(try store.position(of: "bob", in: annBob) == 3)
            try store.setPositions([(user: "bob", conversation: annBob, sequence: 2)])
            #expect(try store.position(of: "bob", in: annBob) == 3)
            try store.setPositions([(user: "bob", conversation: annBob, sequence: 4), (user: "bob", conversation: annBob, sequence: 1)])
            #expect(try store.position(of: "bob", in: annBob) == 4)
            try store.setPositions([(user: "bob", conversation: annBob, sequence: 99)])
            #expect(try store.position(of: "bob", in: annBob) == 5)
            #expect(try store.position(of: "ann", in: annBob) == 0)
            try store.setPositions([(user: "ann", conversation: .room, sequence: 7)])
            #expect(try store.position(of: "ann", in: .room) == 0)  // the room has no message yet
            #expect(throws: StoreError.invalidConversation(.direct("bob", "ann"))) {
                try store.setPositions([
                    (user: "ann", conversation: annBob, sequence: 2), (user: "ann", conversation: .direct("bob", "ann"), sequence: 2)
                ])
            }
            #expect(try store.position(of: "ann", in: annBob) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func historyIsAscendingAndLimited(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", in: store)
            _ = try store.append((1...7).map { .make("ann", in: .room, id: $0) })
            #expect(try store.lastMessages(in: .room, limit: 3).map(\.sequence) == [5, 6, 7])
            #expect(try store.lastMessages(in: .room, limit: 100).map(\.sequence) == [1, 2, 3, 4, 5, 6, 7])
            #expect(try store.lastMessages(in: .room, limit: 0) == [])
            #expect(try store.lastMessages(in: annBob, limit: 5) == [])
            #expect(try store.messages(in: .room, after: 2, limit: 3).map(\.sequence) == [3, 4, 5])
            #expect(try store.messages(in: .room, after: 5, limit: 10).map(\.sequence) == [6, 7])
            #expect(try store.messages(in: .room, after: 7, limit: 10) == [])
            #expect(try store.messages(in: .room, after: .max, limit: 10) == [])
            #expect(try store.messages(in: .room, after: 0, limit: -1) == [])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func directConversationsAreThoseOfTheUserWithMessagesSorted(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", "bob", "cy", "dan", in: store)
            _ = try store.append([
                .make("cy", in: annCy, id: 1), .make("bob", in: annBob, id: 1), .make("bob", in: .direct("bob", "cy"), id: 2),
                .make("ann", in: .direct("ann", "ann"), id: 1), .make("dan", in: .room, id: 1)
            ])
            #expect(try store.directConversations(of: "ann") == [.direct("ann", "ann"), .direct("ann", "bob"), .direct("ann", "cy")])
            #expect(try store.directConversations(of: "cy") == [.direct("ann", "cy"), .direct("bob", "cy")])
            #expect(try store.directConversations(of: "dan") == [])
            #expect(try store.directConversations(of: "zed") == [])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aUserStartsInTheRoomAtItsHeadWhenCreated(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let ann = try store.createUser(named: "ann", passwordHash: "H1", at: storeEpoch.addingTimeInterval(0.123_456))
            #expect(
                ann == UserRecord(name: "ann", passwordHash: "H1", roomStart: 0, created: Date(timeIntervalSince1970: 1_700_000_000.123)))
            _ = try store.append((1...3).map { .make("ann", in: .room, id: $0) })
            let bob = try store.createUser(named: "bob", passwordHash: nil, at: storeEpoch)
            #expect(bob.roomStart == 3)
            #expect(try store.user(named: "bob") == bob)
            #expect(try store.user(named: "ann") == ann)
            #expect(try store.user(named: "zed") == nil)
            #expect(throws: StoreError.userExists("ann")) { try store.createUser(named: "ann", passwordHash: nil, at: storeEpoch) }
            try store.setPasswordHash("H2", forUser: "bob")
            #expect(try store.user(named: "bob")?.passwordHash == "H2")
            #expect(throws: StoreError.unknownUser("zed")) { try store.setPasswordHash("H", forUser: "zed") }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func canonicallyEquivalentNamesAreOneUser(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try store.createUser(named: "e\u{301}va", passwordHash: nil, at: storeEpoch)
            #expect(try store.user(named: "\u{e9}va")?.name == "\u{e9}va")
            #expect(throws: StoreError.userExists("\u{e9}va")) {
                try store.createUser(named: "\u{e9}va", passwordHash: nil, at: storeEpoch)
            }
            #expect(try store.append([.make("\u{e9}va", in: .room, id: 1)]) == [.stored(sequence: 1)])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func timesAreKeptToTheMillisecond(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", in: store)
            _ = try store.append([.make("ann", in: .room, id: 1, seconds: 0.123_456), .make("ann", in: .room, id: 2, seconds: -0.000_6)])
            #expect(
                try store.messages(in: .room, after: 0, limit: 2).map(\.time) == [
                    Date(timeIntervalSince1970: 1_700_000_000.123), Date(timeIntervalSince1970: 1_699_999_999.999)
                ])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func retentionByCountKeepsTheLatestPerConversationAndNeverReusesASequence(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", "bob", in: store)
            _ = try store.append((1...10).map { .make("ann", in: .room, id: $0) } + (11...13).map { .make("ann", in: annBob, id: $0) })
            try store.setPositions([(user: "bob", conversation: .room, sequence: 10)])
            #expect(try store.applyRetention(RetentionPolicy(maxMessagesPerConversation: 4), now: storeEpoch) == 6)
            #expect(try store.lastMessages(in: .room, limit: 100).map(\.sequence) == [7, 8, 9, 10])
            #expect(try store.lastMessages(in: annBob, limit: 100).map(\.sequence) == [1, 2, 3])
            #expect(try store.messages(in: .room, after: 2, limit: 2).map(\.sequence) == [7, 8])
            #expect(try store.head(of: .room) == 10)
            #expect(try store.position(of: "bob", in: .room) == 10)
            #expect(try store.applyRetention(RetentionPolicy(maxMessagesPerConversation: 4), now: storeEpoch) == 0)
            // Sequences go on; a resend of a message removed is no longer known and is stored anew.
            #expect(
                try store.append([.make("ann", in: .room, id: 1), .make("ann", in: .room, id: 10)]) == [
                    .stored(sequence: 11), .duplicate(sequence: 10)
                ])
            #expect(try store.applyRetention(RetentionPolicy(maxMessagesPerConversation: 0), now: storeEpoch) == 8)
            #expect(try store.lastMessages(in: .room, limit: 100) == [])
            #expect(try store.head(of: .room) == 11)
            #expect(try store.applyRetention(.keepEverything, now: storeEpoch) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func retentionByAgeRemovesWhatIsOlderThanTheLimit(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try users("ann", in: store)
            // Stored at 0, 60, 120, 180 and 240 s.
            _ = try store.append((0...4).map { .make("ann", in: .room, id: UInt64($0), seconds: Double($0 * 60)) })
            let now = storeEpoch.addingTimeInterval(300)
            // The cutoff is 300 - 180 = 120 s: the message stored at 120 s is exactly 180 s old and stays.
            #expect(try store.applyRetention(RetentionPolicy(maxAge: .seconds(180)), now: now) == 2)
            #expect(try store.lastMessages(in: .room, limit: 10).map(\.sequence) == [3, 4, 5])
            #expect(try store.applyRetention(RetentionPolicy(maxAge: .milliseconds(179_999)), now: now) == 1)
            // Both limits: a message goes when either says so.
            #expect(try store.applyRetention(RetentionPolicy(maxMessagesPerConversation: 1, maxAge: .seconds(3_600)), now: now) == 1)
            #expect(try store.lastMessages(in: .room, limit: 10).map(\.sequence) == [5])
            #expect(try store.head(of: .room) == 5)
        }
    }
}
