import AsyncSocket
@testable import ChatProtocol
import ChatServer
import Foundation
import Testing

/// A store whose first ``createUser(named:passwordHash:at:)`` fails as a request that timed out while
/// its write was in fact kept: the user shows up only on the second read after the failure. That is what
/// a JetStream store does when NATS restarts under a login (the client resends what it buffered once it
/// reconnects, after the request's timeout).
final class LateWriteStore: MessageStore {
    struct TimedOut: Error {}

    let inner: any MessageStore = InMemoryMessageStore()
    /// The user written late, and the reads left before it shows.
    private let late = LockedValue<(name: String, readsLeft: Int)?>(nil)
    private let failedOnce = LockedValue(false)

    func user(named name: String) throws -> UserRecord? {
        let hidden = late.withLock { late -> Bool in
            guard let pending = late, pending.name == name else { return false }
            if pending.readsLeft == 0 {
                late = nil
                return false
            }
            late = (name, pending.readsLeft - 1)
            return true
        }
        return hidden ? nil : try inner.user(named: name)
    }

    func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord {
        let record = try inner.createUser(named: name, passwordHash: passwordHash, at: time)
        guard
            failedOnce.withLock({ failed in
                defer { failed = true }; return !failed
            })
        else { return record }
        late.withLock { $0 = (name, 1) }
        throw TimedOut()
    }

    func setPasswordHash(_ hash: String, forUser user: String) throws { try inner.setPasswordHash(hash, forUser: user) }
    func append(_ batch: [NewMessage]) throws -> [AppendOutcome] { try inner.append(batch) }
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

@Suite struct LateClaimTests {
    /// Regression (chat-chaos nats-restart): a first login's claim timed out but was kept, and showed
    /// up while the retry hashed its password; the retry was refused "ann was claimed by another login
    /// just now" for ever after a NATS restart. Now the password is checked against that claim.
    @Test func aClaimThatShowsUpWhileTheRetryHashesIsCheckedAgainstItsPassword() async throws {
        let chat = try V2Fixture(store: LateWriteStore())
        let ann = chat.peer()
        #expect(
            try await ann.loggedIn("ann", password: "ann's secret")
                == .error(code: .storeUnavailable, detail: "the message store failed; try again later", id: nil, retryAfter: nil))
        #expect(accepted("ann")(try await ann.loggedIn("ann", password: "ann's secret")))
    }

    /// The same race with another password is a wrong password, as for any claimed name.
    @Test func aClaimThatShowsUpWhileAnotherPasswordHashesRefusesIt() async throws {
        let chat = try V2Fixture(store: LateWriteStore())
        let ann = chat.peer(), mallory = chat.peer()
        #expect(
            try await ann.loggedIn("ann", password: "ann's secret")
                == .error(code: .storeUnavailable, detail: "the message store failed; try again later", id: nil, retryAfter: nil))
        #expect(
            try await mallory.loggedIn("ann", password: "not ann's")
                == .error(code: .badPassword, detail: "wrong password for ann", id: nil, retryAfter: nil))
        #expect(accepted("ann")(try await ann.loggedIn("ann", password: "ann's secret")))
    }
}
