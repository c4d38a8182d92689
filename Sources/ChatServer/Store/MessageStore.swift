import ChatProtocol
import Foundation

/// Where the chat server keeps what must survive it: users (with their password hashes), the messages
/// of every conversation as append-only logs numbered from 1 without gaps, and how far each user has
/// received each conversation (their position; 0 = nothing yet).
///
/// A broadcast is stored once, in ``ConversationID/room``, not once per recipient; a direct message once,
/// in the conversation of its two users. The server acknowledges a message to its sender only after
/// ``append(_:)`` returned, so what ``append(_:)`` returned is durable as the implementation promises
/// (``SQLiteMessageStore``: across a crash of the process; ``InMemoryMessageStore``: not at all).
///
/// Threading: the server calls a store from its one serial routing queue; implementations are safe to
/// call from any thread, one call at a time or concurrently (each call is atomic).
///
/// Errors: ``StoreError`` for what the caller asked that the store refuses (the same in every
/// implementation), and the backend's own errors (``SQLiteError``) when storage fails; after a throw
/// nothing of the call was stored.
public protocol MessageStore: AnyObject, Sendable {
    /// The user called `name`, or the user whose name is too similar to it (their ``UserName/Key``s
    /// match: `ANN` finds `ann`), or nil if no such name has ever logged in. The user of exactly this
    /// name comes first; of several similar ones (a store from before the name rules may hold them),
    /// the oldest. The record's ``UserRecord/name`` is the registered spelling; every other method
    /// takes that exact spelling.
    func user(named name: String) throws -> UserRecord?

    /// Records user `name`, created at `time` (kept to the millisecond), with ``UserRecord/roomStart``
    /// the room's head now, so broadcasts stored before the user existed are not theirs.
    /// - Throws: ``StoreError/userExists(_:)`` with the existing user's name if ``user(named:)`` finds
    ///   one (the same name, or one too similar).
    func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord

    /// Replaces the password hash of user `user` (a name claimed with a password for the first time).
    /// - Throws: ``StoreError/unknownUser(_:)``.
    func setPasswordHash(_ hash: String, forUser user: String) throws

    /// Stores `batch` in order, in one transaction (group commit: one durable write for the lot), and
    /// says per message, in the same order, which sequence it has: `.stored` with the next sequence of
    /// its conversation, or `.duplicate` with the sequence already stored for the same
    /// (sender, client instance, client id), which is not stored again (also within the batch).
    /// - Throws: ``StoreError/unknownUser(_:)`` if a sender, or the other user of a direct conversation,
    ///   does not exist; ``StoreError/notAMember(sender:conversation:)`` for a direct message whose
    ///   sender is not one of its two users; ``StoreError/invalidConversation(_:)``. On any throw
    ///   nothing of the batch is stored.
    func append(_ batch: [NewMessage]) throws -> [AppendOutcome]

    /// At most `limit` messages of `conversation` with a sequence above `after`, ascending (the
    /// backlog to send from a position). Messages removed by retention are skipped: the first returned
    /// may be above `after + 1`. `limit` ≤ 0 returns none.
    func messages(in conversation: ConversationID, after: UInt64, limit: Int) throws -> [StoredMessage]

    /// The last `limit` messages still stored of `conversation`, ascending (history). `limit` ≤ 0
    /// returns none.
    func lastMessages(in conversation: ConversationID, limit: Int) throws -> [StoredMessage]

    /// The sequence of the last message ever stored in `conversation` (0 if none); retention does not
    /// lower it.
    func head(of conversation: ConversationID) throws -> UInt64

    /// The direct conversations `user` is one of the two users of that have at least one message ever
    /// stored, sorted.
    func directConversations(of user: String) throws -> [ConversationID]

    /// How far `user` has received `conversation` (0 = nothing yet).
    func position(of user: String, in conversation: ConversationID) throws -> UInt64

    /// What the start of `user`'s stored session needs of each of `conversations`, in order: its
    /// head (as ``head(of:)``), `user`'s position (`known` by the conversation's description, else
    /// as ``position(of:in:)``), and in a direct conversation of two users the other's position
    /// (nil when its read failed: only that receipt is left out). A clustered store reads them all
    /// in one round trip; the default reads them one after another.
    /// - Throws: what the head and position reads throw.
    func conversationStarts(of user: String, in conversations: [ConversationID], known: [String: UInt64]) throws -> [ConversationStart]

    /// Moves positions forward, in one transaction. A position never moves backwards (an update below
    /// the recorded position is ignored) and never beyond the conversation's head (an update above it
    /// records the head). Updates are applied in order, so a later one for the same user and
    /// conversation wins only if it is higher.
    /// - Throws: ``StoreError/invalidConversation(_:)``; nothing is recorded then.
    func setPositions(_ updates: [(user: String, conversation: ConversationID, sequence: UInt64)]) throws

    /// Removes the messages `policy` says are too many or too old at `now`, in one transaction, and
    /// returns how many were removed. Heads, positions and users are kept. A resend of a message
    /// removed this way is no longer recognised as a duplicate.
    func applyRetention(_ policy: RetentionPolicy, now: Date) throws -> Int
}

/// One conversation's part of a stored session's start (``MessageStore/conversationStarts(of:in:known:)``).
public struct ConversationStart: Sendable, Equatable {
    /// The sequence of the conversation's last message (0 if none).
    public var head: UInt64
    /// How far the user has received it.
    public var position: UInt64
    /// How far the other user of a direct conversation has received it; nil for the room, a
    /// conversation with oneself, or a read that failed.
    public var otherPosition: UInt64?

    public init(head: UInt64, position: UInt64, otherPosition: UInt64?) {
        self.head = head
        self.position = position
        self.otherPosition = otherPosition
    }
}

extension MessageStore {
    /// Reads each conversation's head and positions one after another (see the requirement).
    public func conversationStarts(
        of user: String, in conversations: [ConversationID], known: [String: UInt64]
    ) throws -> [ConversationStart] {
        try conversationStartsOneByOne(of: user, in: conversations, known: known)
    }

    /// ``conversationStarts(of:in:known:)`` by ``head(of:)`` and ``position(of:in:)``, one after another.
    func conversationStartsOneByOne(
        of user: String, in conversations: [ConversationID], known: [String: UInt64]
    ) throws -> [ConversationStart] {
        try conversations.map { conversation in
            ConversationStart(
                head: try head(of: conversation),
                position: try known[conversation.description] ?? position(of: user, in: conversation),
                otherPosition: conversation.otherUser(than: user).flatMap { try? position(of: $0, in: conversation) })
        }
    }
}

extension ConversationID {
    /// The other user of a direct conversation of `user` with someone else; nil for the room or a
    /// conversation with oneself.
    func otherUser(than user: String) -> String? {
        guard case .direct(let first, let second) = self, first != second else { return nil }
        return first == user ? second : first
    }
}
