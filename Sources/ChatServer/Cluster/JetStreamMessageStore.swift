import AsyncSocket
import ChatProtocol
import ChatSQLite
import Foundation
import NATSClient

/// The chat's ``MessageStore`` for a cluster (issue 14): every node of one chat uses the same NATS
/// JetStream, so any node can deliver what another accepted. Messages are one JetStream stream; users,
/// conversation heads, client ids and positions are JetStream key-value buckets (one key per record).
/// Every name has the `prefix` the store was opened with, so several chats (or test runs) can share
/// one NATS server:
///
/// | what | where | key or subject → value |
/// | --- | --- | --- |
/// | messages | stream `PREFIX_MSGS` | subject `PREFIX.msg.CONV.SEQ` → ``JetStreamRecord/Message`` JSON |
/// | users | bucket `PREFIX_users` | `u.NAME`, and `f.FOLDED`, `c.CASED` (the ``UserName/Key`` parts) → the name |
/// | heads | bucket `PREFIX_heads` | `CONV` → `HEAD FIRST` (last sequence ever given; first not removed) |
/// | client ids | bucket `PREFIX_ids` | `SENDER.INSTANCE.ID` → the sequence it was stored with |
/// | positions | bucket `PREFIX_positions` | `USER.CONV` → the sequence |
/// | direct conversations | bucket `PREFIX_directs` | `USER` → JSON list of conversations |
///
/// (CONV, NAME, … are ``KeyValueBucket/encodeKey(_:)`` of the text in NFC: lowercase hex of the UTF-8 bytes.)
///
/// Sequences: a message is published to the subject of the next sequence of its conversation only if
/// that subject holds nothing yet (JetStream's expected-last-subject-sequence 0), so when nodes race
/// for a sequence JetStream stores one and the others take the next: no sequence is given twice, none
/// is skipped, and the stream holds each conversation in order. De-duplication: a client id is
/// recorded with its sequence once the message is stored; a resend is found by it, and a resend after
/// a crash between the two steps by JetStream's duplicate window (``duplicateWindow``) on the id.
/// Nothing a reader needs depends on the steps after the publish: a conversation's head is the higher
/// of the head record and the sequence of its last message in the stream, and a direct conversation is
/// listed for its users before its first message is published. A node that stops between the steps
/// (a crash, NATS lost, a request that timed out after the write) leaves nothing unreachable.
///
/// Differences from ``SQLiteMessageStore``: ``append(_:)`` checks the whole batch first (an invalid
/// message stores nothing), but is atomic per message, not per batch: a NATS failure in the middle
/// leaves the messages before it stored, and the server's retry of each alone finds them as duplicates.
/// Durability is JetStream's (file storage, `replicas` copies, acknowledged by the stream's leader).
///
/// Threading: calls are blocking request/replies to NATS (a few hundred microseconds each on loopback;
/// an append makes about six), each call atomic for its own records; the server calls them from its
/// routing queue, never from an event loop. While NATS is unreachable every call fails at once with
/// ``NATSError/notConnected`` (or ``NATSError/timeout`` after the connection's request timeout).
///
/// Errors: ``StoreError`` as ``MessageStore`` says; ``NATSError`` when NATS fails;
/// ``StoreError/corrupt(_:)`` for a record this program did not write.
public final class JetStreamMessageStore: MessageStore {
    /// What the names of the stream and buckets start with.
    public let prefix: String
    /// The node id written into each message stored here, or nil.
    public let origin: String?
    let connection: NATSConnection
    let jetStream: JetStream
    let users: KeyValueBucket
    let heads: KeyValueBucket
    let ids: KeyValueBucket
    let positions: KeyValueBucket
    let directs: KeyValueBucket
    /// Sends a stored login's reads at once (``conversationStarts(of:in:known:)``).
    let batcher: RequestBatcher
    /// The stream of messages: `PREFIX_MSGS`.
    var streamName: String { prefix + "_MSGS" }

    /// How long JetStream remembers a message's client id (`Nats-Msg-Id`): 1 hour. Covers the resend
    /// of a message whose node crashed between storing it and recording its id.
    public static let duplicateWindow: Duration = .seconds(3600)

    /// How often a compare-and-set is tried again after another node changed the record first.
    static let maxAttempts = 64

    /// Tests only: called with the sequence of each message just published, before its id and head are
    /// recorded; what it throws ends the append there, as a node that stops at that point would.
    let afterPublish = LockedValue<(@Sendable (UInt64) throws -> Void)?>(nil)

    /// Opens (creating when missing) the stream and buckets of `prefix` on `connection`'s JetStream.
    ///
    /// - Parameters:
    ///   - prefix: letters, digits, `_` and `-` only (a JetStream name and a subject token); default `chat`.
    ///   - replicas: copies JetStream keeps of every record (1 on one NATS server; 3 in a three-server
    ///     NATS cluster survives the loss of one).
    ///   - origin: the node id written into every message this store stores (``ChatCluster``: so a node
    ///     reading the stream knows which messages it fanned out itself); nil: none.
    /// - Throws: ``NATSError`` when JetStream cannot create or bind them (not enabled on the server,
    ///   `replicas` above the NATS cluster's size, …); ``NATSError/invalid(_:)`` for a bad prefix.
    public init(connection: NATSConnection, prefix: String = "chat", replicas: Int = 1, origin: String? = nil) throws {
        guard JetStreamMessageStore.isValidName(prefix) else {
            throw NATSError.invalid("a store prefix is letters, digits, _ and - only: \(prefix)")
        }
        self.prefix = prefix
        self.origin = origin
        self.connection = connection
        jetStream = try connection.jetStream()
        try jetStream.addOrUpdateStream(
            .init(
                name: prefix + "_MSGS", subjects: [prefix + ".msg.>"], replicas: replicas,
                duplicateWindow: Self.duplicateWindow))
        users = try jetStream.keyValue(bucket: prefix + "_users", replicas: replicas)
        heads = try jetStream.keyValue(bucket: prefix + "_heads", replicas: replicas)
        ids = try jetStream.keyValue(bucket: prefix + "_ids", replicas: replicas)
        positions = try jetStream.keyValue(bucket: prefix + "_positions", replicas: replicas)
        directs = try jetStream.keyValue(bucket: prefix + "_directs", replicas: replicas)
        batcher = try RequestBatcher(connection: connection)
    }

    /// Whether `name` is non-empty letters, digits, `_` and `-` only: a JetStream name and a subject
    /// token (a store prefix, a node id).
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// The key under which a message's client id is recorded: `SENDER.INSTANCE.ID`.
    static func idKey(sender: String, instance: String, id: UInt64) -> String {
        [sender, instance, String(id)].map(key).joined(separator: ".")
    }

    /// The key of `text`: ``KeyValueBucket/encodeKey(_:)`` of its NFC form, so canonically equivalent
    /// spellings (`é` and `e` + U+0301, equal as Swift strings) are one key, as they are one row in SQLite.
    static func key(_ text: String) -> String { KeyValueBucket.encodeKey(text.precomposedStringWithCanonicalMapping) }

    /// Runs a compare-and-set write: true when it was made, false when another writer came first (the
    /// key exists for a create, its revision moved for an update).
    /// - Throws: the write's other ``NATSError``s.
    static func wrote(_ write: () throws(NATSError) -> UInt64) throws(NATSError) -> Bool {
        do {
            _ = try write()
            return true
        } catch {
            if error == .keyExists || error == .wrongLastSequence { return false }
            throw error
        }
    }
    static func key(_ conversation: ConversationID) -> String { key(conversation.description) }

    /// The subject of message `sequence` of `conversation`.
    func subject(_ conversation: ConversationID, _ sequence: UInt64) -> String {
        "\(prefix).msg.\(Self.key(conversation)).\(sequence)"
    }

    // MARK: Users

    public func user(named name: String) throws -> UserRecord? {
        if let record = try record(of: name) { return record }
        let nameKey = UserName.Key(name)
        for similar in ["f." + Self.key(nameKey.folded), "c." + Self.key(nameKey.cased)] {
            if let entry = try users.get(similar), let other = String(data: entry.value, encoding: .utf8) {
                return try record(of: other)
            }
        }
        return nil
    }

    /// The record stored under exactly `name`.
    private func record(of name: String) throws -> UserRecord? {
        guard let entry = try users.get("u." + Self.key(name)) else { return nil }
        return try JetStreamRecord.User.decode(entry.value).record
    }

    /// Claims the name's two ``UserName/Key`` parts, then writes the record. A part that holds this
    /// very name already is a claim of an earlier attempt that failed half-way (NATS lost in between):
    /// taken over, so the user can be created when NATS is back.
    public func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord {
        let nameKey = UserName.Key(name)
        for similar in ["f." + Self.key(nameKey.folded), "c." + Self.key(nameKey.cased)] {
            if try Self.wrote({ () throws(NATSError) in try users.create(similar, Data(name.utf8)) }) { continue }
            let holder = try users.get(similar).flatMap { String(data: $0.value, encoding: .utf8) } ?? name
            guard holder == name else { throw StoreError.userExists(holder) }
        }
        let record = UserRecord(name: name, passwordHash: passwordHash, roomStart: try head(of: .room), created: time)
        let value = try JetStreamRecord.User(record).encoded()
        guard try Self.wrote({ () throws(NATSError) in try users.create("u." + Self.key(name), value) }) else {
            throw StoreError.userExists(name)
        }
        return record
    }

    public func setPasswordHash(_ hash: String, forUser user: String) throws {
        let key = "u." + Self.key(user)
        for _ in 0..<Self.maxAttempts {
            guard let entry = try users.get(key) else { throw StoreError.unknownUser(user) }
            var record = try JetStreamRecord.User.decode(entry.value).record
            record.passwordHash = hash
            let value = try JetStreamRecord.User(record).encoded()
            if try Self.wrote({ () throws(NATSError) in try users.update(key, value, lastRevision: entry.revision) }) { return }
        }
        throw NATSError.wrongLastSequence
    }

    // MARK: Messages

    public func append(_ batch: [NewMessage]) throws -> [AppendOutcome] {
        var known: Set<String> = []
        for message in batch {
            try message.check { name in
                if known.contains(name) { return true }
                let exists = try record(of: name) != nil
                if exists { known.insert(name) }
                return exists
            }
        }
        return try batch.map(append)
    }

    /// Stores one checked message (see the type's documentation for the order of the steps).
    private func append(_ message: NewMessage) throws -> AppendOutcome {
        let idKey = Self.idKey(sender: message.sender, instance: message.clientInstance, id: message.clientID)
        // An id is recorded only once its message is stored (and forgotten when retention removes it).
        if let known = try ids.get(idKey), let sequence = UInt64(String(decoding: known.value, as: UTF8.self)) {
            return .duplicate(sequence: sequence)
        }
        let encoded = try JetStreamRecord.Message(message, origin: origin).encoded()
        var sequence = try bounds(of: message.conversation).head + 1
        if sequence == 1, let (first, second) = message.conversation.members {
            // Listed before its first message is stored: a node that stops in between leaves a listed
            // conversation with nothing in it, never a message that no login of its reader looks for.
            for member in Set([first, second]) { try addDirect(message.conversation, of: member) }
        }
        var messageID = idKey
        for _ in 0..<Self.maxAttempts {
            let ack: JetStream.PublishAck
            do {
                // Stored only if nothing holds this sequence yet: JetStream decides between racing nodes.
                ack = try jetStream.publish(
                    subject(message.conversation, sequence), encoded, messageID: messageID,
                    expectedLastSubjectSequence: 0)
            } catch {
                guard error == .wrongLastSequence else { throw error }
                sequence += 1  // taken by another node (or this one, before): the next
                continue
            }
            if ack.duplicate {
                // The same id within JetStream's duplicate window: stored before, its id not recorded
                // (a crash in between), or removed by retention since (then it is stored anew).
                if let original = try jetStream.message(stream: streamName, sequence: ack.sequence),
                    let (conversation, stored) = parse(original.subject)
                {
                    try recordID(idKey, stored)
                    // The first attempt may have failed before raising the head: readers at their
                    // next login would not see the message.
                    try raiseHead(of: conversation, to: stored)
                    return .duplicate(sequence: stored)
                }
                messageID = idKey + "." + String(ack.sequence)
                continue
            }
            try afterPublish.withLock { $0 }?(sequence)
            try recordID(idKey, sequence)
            try raiseHead(of: message.conversation, to: sequence)
            return .stored(sequence: sequence)
        }
        throw NATSError.wrongLastSequence
    }

    /// Records that the message of client id `idKey` is `sequence`.
    private func recordID(_ idKey: String, _ sequence: UInt64) throws {
        _ = try ids.put(idKey, Data(String(sequence).utf8))
    }

    /// Raises `conversation`'s head to `sequence` (compare-and-set; never lowers it).
    private func raiseHead(of conversation: ConversationID, to sequence: UInt64) throws {
        let key = Self.key(conversation)
        for _ in 0..<Self.maxAttempts {
            let entry = try heads.get(key)
            var head = try entry.map { try JetStreamRecord.Head.decode($0.value) } ?? JetStreamRecord.Head(head: 0, first: 1)
            guard sequence > head.head else { return }
            head.head = sequence
            let value = head.encoded()
            if try Self.wrote({ () throws(NATSError) in
                if let entry { try heads.update(key, value, lastRevision: entry.revision) } else { try heads.create(key, value) }
            }) {
                return
            }
        }
        throw NATSError.wrongLastSequence
    }

    /// The conversation and sequence of a message subject `PREFIX.msg.CONV.SEQ`, or nil.
    func parse(_ subject: String) -> (ConversationID, UInt64)? {
        let parts = subject.split(separator: ".")
        guard parts.count == 4, parts[0] == prefix, parts[1] == "msg", let sequence = UInt64(parts[3]),
            let text = KeyValueBucket.decodeKey(String(parts[2])), let conversation = ConversationID(text)
        else { return nil }
        return (conversation, sequence)
    }

    /// Adds `conversation` to `user`'s direct conversations.
    private func addDirect(_ conversation: ConversationID, of user: String) throws {
        let key = Self.key(user)
        for _ in 0..<Self.maxAttempts {
            let entry = try directs.get(key)
            var list = try entry.map { try JSONDecoder().decode([String].self, from: $0.value) } ?? []
            guard !list.contains(conversation.description) else { return }
            list.append(conversation.description)
            let value = try JSONEncoder().encode(list)
            if try Self.wrote({ () throws(NATSError) in
                if let entry { try directs.update(key, value, lastRevision: entry.revision) } else { try directs.create(key, value) }
            }) {
                return
            }
        }
        throw NATSError.wrongLastSequence
    }

    /// Message `sequence` of `conversation`, and its sequence in the stream; nil when not stored.
    func stored(_ conversation: ConversationID, _ sequence: UInt64) throws -> (message: StoredMessage, streamSequence: UInt64)? {
        guard let found = try jetStream.lastMessage(stream: streamName, subject: subject(conversation, sequence)) else { return nil }
        let record = try JetStreamRecord.Message.decode(found.data)
        return (record.stored(in: conversation, sequence: sequence), found.sequence)
    }

    /// The head and the first sequence not removed of `conversation`. The head is the higher of the
    /// recorded one and the sequence of the conversation's last message in the stream: a message is
    /// stored before its head is raised, and a node that stopped (or failed) in between left the head
    /// one short, so that a reader logging in afterwards would never be sent that message (ChatFailoverTests,
    /// about 1 run in 4). Within a conversation the stream holds the sequences in order (each is
    /// published only once the one before is in the stream), so its last message is the true head.
    func bounds(of conversation: ConversationID) throws -> JetStreamRecord.Head {
        var bounds = JetStreamRecord.Head(head: 0, first: 1)
        if let entry = try heads.get(Self.key(conversation)) { bounds = try JetStreamRecord.Head.decode(entry.value) }
        if let last = try jetStream.lastMessage(stream: streamName, subject: "\(prefix).msg.\(Self.key(conversation)).*"),
            let (_, sequence) = parse(last.subject)
        {
            bounds.head = max(bounds.head, sequence)
        }
        return bounds
    }

    public func messages(in conversation: ConversationID, after: UInt64, limit: Int) throws -> [StoredMessage] {
        guard limit > 0, after < UInt64.max else { return [] }
        let bounds = try bounds(of: conversation)
        var found: [StoredMessage] = []
        var sequence = max(after + 1, bounds.first)
        while found.count < limit {
            // A message stored by another node a moment ago may be past the head read above.
            guard let message = try stored(conversation, sequence)?.message else {
                if sequence > bounds.head { break }
                sequence += 1
                continue
            }
            found.append(message)
            sequence += 1
        }
        return found
    }

    public func lastMessages(in conversation: ConversationID, limit: Int) throws -> [StoredMessage] {
        guard limit > 0 else { return [] }
        let bounds = try bounds(of: conversation)
        var found: [StoredMessage] = []
        var sequence = bounds.head
        while sequence >= bounds.first && sequence > 0 && found.count < limit {
            if let message = try stored(conversation, sequence)?.message { found.append(message) }
            sequence -= 1
        }
        return found.reversed()
    }

    public func head(of conversation: ConversationID) throws -> UInt64 { try bounds(of: conversation).head }

    public func directConversations(of user: String) throws -> [ConversationID] {
        guard let entry = try directs.get(Self.key(user)) else { return [] }
        return try JSONDecoder().decode([String].self, from: entry.value).compactMap(ConversationID.init).sorted()
    }

    // MARK: Positions

    public func position(of user: String, in conversation: ConversationID) throws -> UInt64 {
        guard let entry = try positions.get(Self.key(user) + "." + Self.key(conversation)) else { return 0 }
        return UInt64(String(decoding: entry.value, as: UTF8.self)) ?? 0
    }

    public func setPositions(_ updates: [(user: String, conversation: ConversationID, sequence: UInt64)]) throws {
        if let invalid = updates.first(where: { !$0.conversation.isNormalized }) {
            throw StoreError.invalidConversation(invalid.conversation)
        }
        for update in updates {
            let sequence = min(update.sequence, try head(of: update.conversation))
            guard sequence > 0 else { continue }
            let key = Self.key(update.user) + "." + Self.key(update.conversation)
            let value = Data(String(sequence).utf8)
            var written = false
            for _ in 0..<Self.maxAttempts where !written {
                let entry = try positions.get(key)
                if let entry, sequence <= UInt64(String(decoding: entry.value, as: UTF8.self)) ?? 0 { break }
                written = try Self.wrote({ () throws(NATSError) in
                    if let entry {
                        try positions.update(key, value, lastRevision: entry.revision)
                    } else {
                        try positions.create(key, value)
                    }
                })
            }
        }
    }
}
