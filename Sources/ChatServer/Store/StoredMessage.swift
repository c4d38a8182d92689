import ChatProtocol
import ChatSQLite
import Foundation

/// A message as the store keeps it: its place in its conversation, who sent it and when, and the
/// sender's id for it (by which a resend is recognised).
public struct StoredMessage: Sendable, Equatable {
    /// The conversation it belongs to.
    public var conversation: ConversationID
    /// Its sequence in ``conversation``: from 1, without gaps, assigned by the store.
    public var sequence: UInt64
    /// The user who sent it.
    public var sender: String
    /// The text, as sent.
    public var text: String
    /// When the server received it, to the millisecond (stored as milliseconds since 1970, UTC).
    public var time: Date
    /// The sender's client instance: 32 lowercase hex digits (any text is kept as it is).
    public var clientInstance: String
    /// The sender's id for it, unique per client instance.
    public var clientID: UInt64

    /// A stored message with these values; `time` is rounded to the millisecond.
    public init(
        conversation: ConversationID, sequence: UInt64, sender: String, text: String, time: Date, clientInstance: String, clientID: UInt64
    ) {
        self.conversation = conversation
        self.sequence = sequence
        self.sender = sender
        self.text = text
        self.time = time.roundedToMilliseconds
        self.clientInstance = clientInstance
        self.clientID = clientID
    }
}

/// A message to store: a ``StoredMessage`` without its sequence, which the store assigns.
public struct NewMessage: Sendable, Equatable {
    /// The conversation: ``ConversationID/room`` for a broadcast, the sender's direct conversation with
    /// the recipient for a direct message.
    public var conversation: ConversationID
    /// The user who sent it.
    public var sender: String
    /// The text.
    public var text: String
    /// When the server received it; kept to the millisecond.
    public var time: Date
    /// The sender's client instance (32 lowercase hex digits).
    public var clientInstance: String
    /// The sender's id for it; with ``sender`` and ``clientInstance`` it identifies the message, so a
    /// resend is stored once.
    public var clientID: UInt64

    /// A message with these values.
    public init(conversation: ConversationID, sender: String, text: String, time: Date, clientInstance: String, clientID: UInt64) {
        self.conversation = conversation
        self.sender = sender
        self.text = text
        self.time = time
        self.clientInstance = clientInstance
        self.clientID = clientID
    }
}

extension NewMessage {
    /// The checks every store makes in ``MessageStore/append(_:)``, `userExists` telling whether a
    /// name is a user's.
    /// - Throws: ``StoreError/invalidConversation(_:)``, ``StoreError/unknownUser(_:)``,
    ///   ``StoreError/notAMember(sender:conversation:)``, and what `userExists` throws.
    func check(userExists: (String) throws -> Bool) throws {
        guard conversation.isNormalized else { throw StoreError.invalidConversation(conversation) }
        guard try userExists(sender) else { throw StoreError.unknownUser(sender) }
        guard let (first, second) = conversation.members else { return }
        guard conversation.hasMember(sender) else { throw StoreError.notAMember(sender: sender, conversation: conversation) }
        let other = first == sender ? second : first
        guard try userExists(other) else { throw StoreError.unknownUser(other) }
    }
}

/// What ``MessageStore/append(_:)`` did with one message.
public enum AppendOutcome: Sendable, Equatable {
    /// Stored now, with this sequence in its conversation.
    case stored(sequence: UInt64)
    /// Stored before (same sender, client instance and client id) with this sequence, in the
    /// conversation the first copy went to; not stored again.
    case duplicate(sequence: UInt64)

    /// The sequence, whichever the case.
    public var sequence: UInt64 {
        switch self {
        case .stored(let sequence), .duplicate(let sequence): return sequence
        }
    }
}

/// A user: a name that has logged in at least once.
public struct UserRecord: Sendable, Equatable {
    /// The name.
    public var name: String
    /// The ``PasswordHasher`` hash of the password that claimed the name; nil for a name never claimed
    /// (live messages only).
    public var passwordHash: String?
    /// The room's head when the user was created: the user receives broadcasts above it only.
    public var roomStart: UInt64
    /// When the user was created, to the millisecond.
    public var created: Date

    /// A user with these values; `created` is rounded to the millisecond.
    public init(name: String, passwordHash: String?, roomStart: UInt64, created: Date) {
        self.name = name
        self.passwordHash = passwordHash
        self.roomStart = roomStart
        self.created = created.roundedToMilliseconds
    }
}

extension Date {
    /// Milliseconds since 1970 (UTC), rounded to the nearest, as the stores keep times; clamped to
    /// ±9×10¹⁸ ms (about ±285 million years), so every `Date` has a value (NaN: 0).
    var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        guard !milliseconds.isNaN else { return 0 }
        return Int64(max(-9e18, min(9e18, milliseconds)))
    }

    /// The date `milliseconds` after 1970-01-01 00:00 UTC.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// This date as the stores give it back: rounded to the nearest millisecond.
    var roundedToMilliseconds: Date { Date(millisecondsSince1970: millisecondsSince1970) }
}
