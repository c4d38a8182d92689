import ChatProtocol
@testable import ChatServer
import Foundation
import TestSupport

/// An ``InMemoryMessageStore`` whose reads first call `hook` with what they read, on the caller's
/// thread: `user ann`, `directConversations ann`, `head room`, `position ann room` (a test's hook
/// may block there, to hold a login's read off the routing queue for as long as it wants).
final class HookedStore: MessageStore, @unchecked Sendable {
    let inner: InMemoryMessageStore
    let hook: @Sendable (String) -> Void

    init(_ inner: InMemoryMessageStore, hook: @escaping @Sendable (String) -> Void) {
        self.inner = inner
        self.hook = hook
    }

    func user(named name: String) throws -> UserRecord? {
        hook("user \(name)")
        return inner.user(named: name)
    }
    func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord {
        try inner.createUser(named: name, passwordHash: passwordHash, at: time)
    }
    func setPasswordHash(_ hash: String, forUser user: String) throws { try inner.setPasswordHash(hash, forUser: user) }
    func append(_ batch: [NewMessage]) throws -> [AppendOutcome] { try inner.append(batch) }
    func messages(in conversation: ConversationID, after: UInt64, limit: Int) throws -> [StoredMessage] {
        inner.messages(in: conversation, after: after, limit: limit)
    }
    func lastMessages(in conversation: ConversationID, limit: Int) throws -> [StoredMessage] {
        inner.lastMessages(in: conversation, limit: limit)
    }
    func head(of conversation: ConversationID) throws -> UInt64 {
        hook("head \(conversation)")
        return inner.head(of: conversation)
    }
    func directConversations(of user: String) throws -> [ConversationID] {
        hook("directConversations \(user)")
        return inner.directConversations(of: user)
    }
    func position(of user: String, in conversation: ConversationID) throws -> UInt64 {
        hook("position \(user) \(conversation)")
        return inner.position(of: user, in: conversation)
    }
    func setPositions(_ updates: [(user: String, conversation: ConversationID, sequence: UInt64)]) throws {
        try inner.setPositions(updates)
    }
    func applyRetention(_ policy: RetentionPolicy, now: Date) throws -> Int { inner.applyRetention(policy, now: now) }
}
