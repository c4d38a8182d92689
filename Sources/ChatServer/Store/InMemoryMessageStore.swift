import AsyncSocket
import ChatProtocol
import ChatSQLite
import Foundation

/// A ``MessageStore`` in memory, for tests and for a server run without a store file: everything is
/// lost when the process ends. Behaves as ``SQLiteMessageStore`` does in every other respect (one test
/// suite runs against both): the same sequences, de-duplication, positions, retention and errors, and
/// times kept to the millisecond.
///
/// Threading: every method may be called from any thread; a lock makes each call atomic.
public final class InMemoryMessageStore: MessageStore {
    private struct Conversation {
        var head: UInt64 = 0
        /// Ascending by sequence; retention leaves holes.
        var messages: [StoredMessage] = []

        /// Appends the message `make` builds for the next sequence number, and returns that number.
        mutating func appending(_ make: (UInt64) -> StoredMessage) -> UInt64 {
            head += 1
            messages.append(make(head))
            return head
        }
    }

    private struct ClientKey: Hashable {
        var sender: String
        var clientInstance: String
        var clientID: UInt64
    }

    private struct PositionKey: Hashable {
        var user: String
        var conversation: ConversationID
    }

    private struct State {
        var users: [String: UserRecord] = [:]
        /// The users' names by key, for names too similar to theirs.
        var names = NameIndex()
        var conversations: [ConversationID: Conversation] = [:]
        var sequences: [ClientKey: UInt64] = [:]
        var positions: [PositionKey: UInt64] = [:]
    }

    private let state = LockedValue(State())

    /// An empty store.
    public init() {}

    /// The user called `name`, or the one whose name is too similar (``UserName/Key``), or nil.
    public func user(named name: String) -> UserRecord? {
        if let user = state.withLock({ $0.users[name] }) { return user }
        let key = UserName.Key(name)
        return state.withLock { state in state.names.similar(to: key).flatMap { state.users[$0] } }
    }

    /// Records user `name`; ``UserRecord/roomStart`` is the room's head now.
    /// - Throws: ``StoreError/userExists(_:)`` with the name of the user found (``user(named:)``).
    public func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord {
        let key = UserName.Key(name)
        return try state.withLock { state throws(StoreError) -> UserRecord in
            if let existing = state.users[name]?.name ?? state.names.similar(to: key) { throw StoreError.userExists(existing) }
            let user = UserRecord(name: name, passwordHash: passwordHash, roomStart: state.conversations[.room]?.head ?? 0, created: time)
            state.users[name] = user
            state.names.insert(name, key: key)
            return user
        }
    }

    /// Replaces user `user`'s password hash.
    /// - Throws: ``StoreError/unknownUser(_:)``.
    public func setPasswordHash(_ hash: String, forUser user: String) throws {
        try state.withLock { state throws(StoreError) in
            guard state.users[user] != nil else { throw StoreError.unknownUser(user) }
            state.users[user]?.passwordHash = hash
        }
    }

    /// Stores `batch` atomically: it is checked whole before anything is stored.
    /// - Throws: as ``MessageStore/append(_:)`` says.
    public func append(_ batch: [NewMessage]) throws -> [AppendOutcome] {
        try state.withLock { state in
            for message in batch {
                try message.check { state.users[$0] != nil }
            }
            return batch.map { message in
                let key = ClientKey(sender: message.sender, clientInstance: message.clientInstance, clientID: message.clientID)
                if let sequence = state.sequences[key] { return .duplicate(sequence: sequence) }
                // Mutated in place (a copy taken out and put back would copy the whole log each time:
                // quadratic, as chat-bench found).
                let sequence = state.conversations[message.conversation, default: Conversation()].appending { head in
                    StoredMessage(
                        conversation: message.conversation, sequence: head, sender: message.sender,
                        text: message.text, time: message.time, clientInstance: message.clientInstance,
                        clientID: message.clientID)
                }
                state.sequences[key] = sequence
                return .stored(sequence: sequence)
            }
        }
    }

    /// At most `limit` messages of `conversation` above `after`, ascending.
    public func messages(in conversation: ConversationID, after: UInt64, limit: Int) -> [StoredMessage] {
        guard limit > 0 else { return [] }
        return state.withLock { state in
            guard let messages = state.conversations[conversation]?.messages else { return [] }
            let start = messages.partitioningIndex { $0.sequence > after }
            return Array(messages[start...].prefix(limit))
        }
    }

    /// The last `limit` messages of `conversation`, ascending.
    public func lastMessages(in conversation: ConversationID, limit: Int) -> [StoredMessage] {
        guard limit > 0 else { return [] }
        return state.withLock { Array(($0.conversations[conversation]?.messages ?? []).suffix(limit)) }
    }

    /// The last sequence ever stored in `conversation` (0 if none).
    public func head(of conversation: ConversationID) -> UInt64 {
        state.withLock { $0.conversations[conversation]?.head ?? 0 }
    }

    /// The direct conversations of `user` with at least one message ever stored, sorted.
    public func directConversations(of user: String) -> [ConversationID] {
        state.withLock { state in
            state.conversations.filter { $0.key.hasMember(user) && $0.value.head > 0 }.keys.sorted()
        }
    }

    /// How far `user` has received `conversation` (0 = nothing yet).
    public func position(of user: String, in conversation: ConversationID) -> UInt64 {
        state.withLock { $0.positions[PositionKey(user: user, conversation: conversation)] ?? 0 }
    }

    /// Moves positions forward (never back, never past the head), atomically.
    /// - Throws: ``StoreError/invalidConversation(_:)``.
    public func setPositions(_ updates: [(user: String, conversation: ConversationID, sequence: UInt64)]) throws {
        if let invalid = updates.first(where: { !$0.conversation.isNormalized }) {
            throw StoreError.invalidConversation(invalid.conversation)
        }
        state.withLock { state in
            for update in updates {
                let sequence = min(update.sequence, state.conversations[update.conversation]?.head ?? 0)
                let key = PositionKey(user: update.user, conversation: update.conversation)
                if sequence > state.positions[key] ?? 0 { state.positions[key] = sequence }
            }
        }
    }

    /// Removes what `policy` says is too many or too old at `now`; returns how many were removed.
    public func applyRetention(_ policy: RetentionPolicy, now: Date) -> Int {
        let cutoff = policy.cutoffMilliseconds(now: now)
        return state.withLock { state in
            var removed = 0
            for (id, var conversation) in state.conversations {
                let before = conversation.messages.count
                // The last `max` sequences are head - max + 1 ... head.
                let tooMany = policy.maxMessagesPerConversation.map { conversation.head - min(conversation.head, UInt64($0)) } ?? 0
                let gone = conversation.messages.filter { message in
                    message.sequence <= tooMany || cutoff.map { message.time.millisecondsSince1970 < $0 } ?? false
                }
                guard !gone.isEmpty else { continue }
                let goneSequences = Set(gone.map(\.sequence))
                conversation.messages.removeAll { goneSequences.contains($0.sequence) }
                for message in gone {
                    state.sequences[ClientKey(sender: message.sender, clientInstance: message.clientInstance, clientID: message.clientID)] =
                        nil
                }
                removed += before - conversation.messages.count
                state.conversations[id] = conversation
            }
            return removed
        }
    }
}

extension Array {
    /// The index of the first element for which `belongs` is true, in an array where every element for
    /// which it is false comes first (binary search); `endIndex` if none.
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
