import AsyncSocket
@testable import ChatProtocol
import ChatServer
import Foundation
import Testing

/// A store whose first ``append(_:)`` keeps the messages and then fails, as a JetStream append whose
/// request timed out after the write (or a batch that failed part-way) does; later appends work.
final class LateAppendStore: MessageStore {
    struct TimedOut: Error {}

    let inner: any MessageStore = InMemoryMessageStore()
    private let failedOnce = LockedValue(false)

    func append(_ batch: [NewMessage]) throws -> [AppendOutcome] {
        let outcomes = try inner.append(batch)
        let fail = failedOnce.withLock { failed in
            defer { failed = true }
            return !failed
        }
        if fail { throw TimedOut() }
        return outcomes
    }

    func user(named name: String) throws -> UserRecord? { try inner.user(named: name) }
    func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord {
        try inner.createUser(named: name, passwordHash: passwordHash, at: time)
    }
    func setPasswordHash(_ hash: String, forUser user: String) throws { try inner.setPasswordHash(hash, forUser: user) }
    func messages(in conversation: ConversationID, after: UInt64, limit: Int) throws -> [StoredMessage] {
        try inner.messages(in: conversation, after: after, limit: limit)
    }
    func lastMessages(in conversation: ConversationID, limit: Int) throws -> [StoredMessage] {
        try inner.lastMessages(in: conversation, limit: limit)
    }
    func head(of conversation: ConversationID) throws -> UInt64 { try inner.head(of: conversation) }
    func directConversations(of user: String) throws -> [ConversationID] { try inner.directConversations(of: user) }
    func position(of user: String, in conversation: ConversationID) throws -> UInt64 {
        try inner.position(of: user, in: conversation)
    }
    func setPositions(_ updates: [(user: String, conversation: ConversationID, sequence: UInt64)]) throws {
        try inner.setPositions(updates)
    }
    func applyRetention(_ policy: RetentionPolicy, now: Date) throws -> Int { try inner.applyRetention(policy, now: now) }
}

@Suite struct LateAppendTests {
    /// Regression (ChatFailoverTests, about 1 run in 20): an append that failed after storing the
    /// message was retried, found it stored ("duplicate") and answered `stored`, but nobody online
    /// got the delivery: a duplicate was never fanned out. The recipient saw it only at its next
    /// login. Now a duplicate goes through the stored sessions' windows again.
    @Test func aMessageStoredByAnAppendThatFailedIsStillDelivered() async throws {
        let chat = try V2Fixture(store: LateAppendStore())
        let ann = chat.peer(), bob = chat.peer()
        #expect(accepted("ann")(try await ann.loggedIn("ann", password: "a")))
        #expect(accepted("bob", online: ["ann"])(try await bob.loggedIn("bob", password: "b")))
        #expect(try await ann.next() == .presence(name: "bob", online: true))
        ann.send(.directMessage(id: 1, to: "bob", text: "kept, then failed"))
        #expect(
            try await ann.next(2) == [
                .stored(id: 1, conversation: "direct:ann bob", sequence: 1),
                delivery("ann", "kept, then failed", "direct:ann bob", 1)
            ])
        #expect(try await bob.next() == delivery("ann", "kept, then failed", "direct:ann bob", 1))
        ann.send(.directMessage(id: 2, to: "bob", text: "after"))
        #expect(try await bob.next() == delivery("ann", "after", "direct:ann bob", 2))
    }
}
