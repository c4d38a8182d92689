import AsyncSocket
import ChatProtocol
import ChatSQLite
import Foundation

/// The chat server's durable ``MessageStore``: one SQLite file (Debian's libsqlite3, 3.40 here) in WAL
/// mode (https://sqlite.org/wal.html), so readers never wait for the writer and a commit is one
/// append to the `-wal` file beside it (`FILE-wal` and `FILE-shm` exist while the store is open; they
/// belong to the file: copy or delete all three together, or none while it is open).
///
/// Durability, set by `synchronous` (``SQLiteSynchronous``): what ``append(_:)`` returned survives a
/// crash of the process (`kill -9`) with either setting. With `.normal` (the default) a power loss or
/// kernel panic may undo the last transactions committed before it — messages already acknowledged
/// to their senders — but never corrupts the file; `.full` syncs the log to the disk at every commit,
/// so acknowledged messages survive power loss too, at the cost of one fsync(2) per batch. Batching
/// (one ``append(_:)`` per loop pass) is what keeps either fast: one commit for the whole batch.
///
/// One server per file: a second process using the same file waits up to 5 s for each write lock, then
/// fails with `SQLITE_BUSY`. File layout: ``schema``, version ``schemaVersion``; a file of version 1
/// is migrated when opened (each user gets its name's ``UserName/Key``).
///
/// Threading: the connection lives behind a lock, so each method is atomic and may be called from any
/// thread; the server calls it from its routing queue. Each call blocks its caller for the SQL it runs
/// (a commit: the write, plus the fsync with `.full`).
///
/// Errors: ``StoreError`` as ``MessageStore`` says; ``SQLiteError`` when SQLite fails (disk full, I/O
/// error, `SQLITE_MISUSE` after ``close()``); ``StoreError/corrupt(_:)`` for values this program
/// never writes.
public final class SQLiteMessageStore: MessageStore {
    /// The file, as given.
    public let path: String
    /// How each commit is made durable.
    public let synchronous: SQLiteSynchronous
    private let database: LockedValue<SQLiteDatabase>

    /// Opens the store at `path`, creating the file (not its directory) and its schema if missing,
    /// migrating a file of an older schema version, and computing the users' name keys again if they
    /// were computed with other rules or another ICU (``UserName/keyVersion``).
    /// - Throws: ``SQLiteError`` (`SQLITE_CANTOPEN`: no such directory or no permission;
    ///   `SQLITE_NOTADB`: the file is not a database), ``StoreError/notAStore(path:)`` (another kind of
    ///   SQLite file), ``StoreError/unsupportedSchemaVersion(found:supported:)`` (made by a later version).
    public init(path: String, synchronous: SQLiteSynchronous = .normal) throws {
        self.path = path
        self.synchronous = synchronous
        let database = try SQLiteDatabase.openStore(
            path: path, applicationID: Self.applicationID, schemaVersion: Self.schemaVersion,
            schema: Self.schema, migrations: Self.migrations, synchronous: synchronous)
        try Self.refreshNameKeys(in: database)
        self.database = LockedValue(database)
    }

    /// Closes the file (the `-wal` file is checkpointed into it and removed). Later calls throw
    /// ``SQLiteError`` `SQLITE_MISUSE`. Also done when the store is released.
    public func close() {
        database.withLock { $0.close() }
    }

    /// Runs `body` with the connection, under the lock (tests read pragmas this way).
    func withDatabase<Result>(_ body: (SQLiteDatabase) throws -> Result) throws -> Result {
        try database.withLock { try body($0) }
    }

    // MARK: Users

    /// The user called `name` or a name too similar to it (``UserName/Key``), or nil: the user of
    /// exactly this name if there is one, else the oldest (by creation time) whose key matches.
    public func user(named name: String) throws -> UserRecord? {
        let key = UserName.Key(name)
        return try withDatabase { database in
            try Self.user(named: name, key: key, in: database)
        }
    }

    private static func user(named name: String, key: UserName.Key, in database: SQLiteDatabase) throws -> UserRecord? {
        try database.query(
            """
            SELECT name, password_hash, room_start, created_ms FROM users
            WHERE name = ?1 OR key_folded = ?2 OR key_cased = ?3
            ORDER BY name = ?1 DESC, created_ms, rowid LIMIT 1
            """,
            [.key(name), .text(key.folded), .text(key.cased)]
        ) { row in
            UserRecord(
                name: row.text(0), passwordHash: row.isNull(1) ? nil : row.text(1),
                roomStart: try row.unsigned(2, "room_start of user \(name)"),
                created: Date(millisecondsSince1970: row.integer(3)))
        }.first
    }

    /// Records user `name` with its ``UserName/Key``; ``UserRecord/roomStart`` is the room's head now.
    /// - Throws: ``StoreError/userExists(_:)`` with the name of the user found (``user(named:)``),
    ///   ``SQLiteError``.
    public func createUser(named name: String, passwordHash: String?, at time: Date) throws -> UserRecord {
        let key = UserName.Key(name)
        return try withDatabase { database in
            try database.transaction {
                if let existing = try Self.user(named: name, key: key, in: database) {
                    throw StoreError.userExists(existing.name)
                }
                let user = UserRecord(
                    name: name, passwordHash: passwordHash, roomStart: try Self.head(of: .room, in: database), created: time)
                try database.run(
                    """
                    INSERT INTO users (name, password_hash, room_start, created_ms, key_folded, key_cased)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    """,
                    [
                        .key(name), passwordHash.map(SQLiteValue.text) ?? .null, try .sequence(user.roomStart),
                        .integer(user.created.millisecondsSince1970),
                        .text(key.folded), .text(key.cased)
                    ])
                return user
            }
        }
    }

    /// Replaces user `user`'s password hash.
    /// - Throws: ``StoreError/unknownUser(_:)``, ``SQLiteError``.
    public func setPasswordHash(_ hash: String, forUser user: String) throws {
        try withDatabase { database in
            guard try database.run("UPDATE users SET password_hash = ?1 WHERE name = ?2", [.text(hash), .key(user)]) == 1 else {
                throw StoreError.unknownUser(user)
            }
        }
    }

    // MARK: Messages

    /// Stores `batch` in one transaction (one commit, so one write, or one fsync with `.full`).
    /// - Throws: as ``MessageStore/append(_:)`` says, and ``SQLiteError``; nothing is stored then.
    public func append(_ batch: [NewMessage]) throws -> [AppendOutcome] {
        guard !batch.isEmpty else { return [] }
        return try withDatabase { database in
            try database.transaction {
                var users: [String: Bool] = [:]
                func userExists(_ name: String) throws -> Bool {
                    if let known = users[name] { return known }
                    let exists = try database.integer("SELECT 1 FROM users WHERE name = ?1", [.key(name)]) != nil
                    users[name] = exists
                    return exists
                }
                var conversations: [ConversationID: (id: Int64, head: UInt64)] = [:]
                var outcomes: [AppendOutcome] = []
                outcomes.reserveCapacity(batch.count)
                for message in batch {
                    try message.check(userExists: userExists)
                    let clientKey: [SQLiteValue] = [
                        .key(message.sender), .key(message.clientInstance), .integer(Int64(bitPattern: message.clientID))
                    ]
                    let original = try database.query(
                        "SELECT sequence FROM messages WHERE sender = ?1 AND client_instance = ?2 AND client_id = ?3", clientKey
                    ) { row in try row.unsigned(0, "sequence of a message") }.first
                    if let original {
                        outcomes.append(.duplicate(sequence: original))
                        continue
                    }
                    var conversation = try conversations[message.conversation] ?? Self.conversationRow(message.conversation, in: database)
                    conversation.head += 1
                    conversations[message.conversation] = conversation
                    try database.run(
                        """
                        INSERT INTO messages (conversation, sequence, sender, text, time_ms, client_instance, client_id)
                        VALUES (?4, ?5, ?1, ?6, ?7, ?2, ?3)
                        """,
                        clientKey + [
                            .integer(conversation.id), try .sequence(conversation.head), .text(message.text),
                            .integer(message.time.millisecondsSince1970)
                        ])
                    outcomes.append(.stored(sequence: conversation.head))
                }
                for conversation in conversations.values {
                    try database.run(
                        "UPDATE conversations SET head = ?1 WHERE id = ?2", [try .sequence(conversation.head), .integer(conversation.id)])
                }
                return outcomes
            }
        }
    }

    /// The id and head of `conversation`'s row, made (head 0) if missing.
    private static func conversationRow(_ conversation: ConversationID, in database: SQLiteDatabase) throws -> (id: Int64, head: UInt64) {
        let name = SQLiteValue.key(conversation.description)
        if let row = try database.query(
            "SELECT id, head FROM conversations WHERE name = ?1", [name],
            row: { row in
                (id: row.integer(0), head: try row.unsigned(1, "head of \(conversation)"))
            }
        ).first {
            return row
        }
        let members = conversation.members
        let id = try database.integer(
            "INSERT INTO conversations (name, member_a, member_b, head) VALUES (?1, ?2, ?3, 0) RETURNING id",
            [name, members.map { .key($0.0) } ?? .null, members.map { .key($0.1) } ?? .null])
        guard let id else { throw StoreError.corrupt("no id for new conversation \(conversation)") }
        return (id, 0)
    }

    private static func head(of conversation: ConversationID, in database: SQLiteDatabase) throws -> UInt64 {
        try database.query("SELECT head FROM conversations WHERE name = ?1", [.key(conversation.description)]) { row in
            try row.unsigned(0, "head of \(conversation)")
        }.first ?? 0
    }

    private static let messageColumns = "sequence, sender, text, time_ms, client_instance, client_id"

    private static func message(_ row: SQLiteRow, in conversation: ConversationID) throws -> StoredMessage {
        StoredMessage(
            conversation: conversation, sequence: try row.unsigned(0, "sequence in \(conversation)"), sender: row.text(1),
            text: row.text(2), time: Date(millisecondsSince1970: row.integer(3)), clientInstance: row.text(4),
            clientID: UInt64(bitPattern: row.integer(5)))
    }

    /// At most `limit` messages of `conversation` above `after`, ascending.
    public func messages(in conversation: ConversationID, after: UInt64, limit: Int) throws -> [StoredMessage] {
        guard limit > 0 else { return [] }
        return try withDatabase { database in
            try database.query(
                """
                SELECT \(Self.messageColumns) FROM messages
                WHERE conversation = (SELECT id FROM conversations WHERE name = ?1) AND sequence > ?2
                ORDER BY sequence LIMIT ?3
                """,
                [.key(conversation.description), .integer(Int64(clamping: after)), .integer(Int64(limit))]
            ) { row in try Self.message(row, in: conversation) }
        }
    }

    /// The last `limit` messages of `conversation`, ascending.
    public func lastMessages(in conversation: ConversationID, limit: Int) throws -> [StoredMessage] {
        guard limit > 0 else { return [] }
        return try withDatabase { database in
            try database.query(
                """
                SELECT \(Self.messageColumns) FROM messages
                WHERE conversation = (SELECT id FROM conversations WHERE name = ?1)
                ORDER BY sequence DESC LIMIT ?2
                """,
                [.key(conversation.description), .integer(Int64(limit))]
            ) { row in try Self.message(row, in: conversation) }.reversed()
        }
    }

    /// The last sequence ever stored in `conversation` (0 if none).
    public func head(of conversation: ConversationID) throws -> UInt64 {
        try withDatabase { try Self.head(of: conversation, in: $0) }
    }

    /// The direct conversations of `user` with at least one message ever stored, sorted.
    public func directConversations(of user: String) throws -> [ConversationID] {
        try withDatabase { database in
            try database.query(
                "SELECT name FROM conversations WHERE (member_a = ?1 OR member_b = ?1) AND head > 0", [.key(user)]
            ) { row in
                let name = row.text(0)
                guard let conversation = ConversationID(name) else {
                    throw StoreError.corrupt("conversation name \(name.debugDescription)")
                }
                return conversation
            }.sorted()
        }
    }

    // MARK: Positions

    /// How far `user` has received `conversation` (0 = nothing yet).
    public func position(of user: String, in conversation: ConversationID) throws -> UInt64 {
        try withDatabase { database in
            try database.query(
                """
                SELECT sequence FROM positions
                WHERE user = ?1 AND conversation = (SELECT id FROM conversations WHERE name = ?2)
                """,
                [.key(user), .key(conversation.description)]
            ) { row in try row.unsigned(0, "position of \(user) in \(conversation)") }.first ?? 0
        }
    }

    /// Moves positions forward (never back, never past the head), in one transaction.
    /// - Throws: ``StoreError/invalidConversation(_:)``, ``SQLiteError``.
    public func setPositions(_ updates: [(user: String, conversation: ConversationID, sequence: UInt64)]) throws {
        if let invalid = updates.first(where: { !$0.conversation.isNormalized }) {
            throw StoreError.invalidConversation(invalid.conversation)
        }
        guard !updates.isEmpty else { return }
        try withDatabase { database in
            try database.transaction {
                for update in updates {
                    guard
                        let conversation = try database.query(
                            "SELECT id, head FROM conversations WHERE name = ?1", [.key(update.conversation.description)],
                            row: { row in (id: row.integer(0), head: try row.unsigned(1, "head of \(update.conversation)")) }
                        ).first
                    else { continue }
                    let sequence = min(update.sequence, conversation.head)
                    guard sequence > 0 else { continue }
                    try database.run(
                        """
                        INSERT INTO positions (user, conversation, sequence) VALUES (?1, ?2, ?3)
                        ON CONFLICT (user, conversation) DO UPDATE SET sequence = max(sequence, excluded.sequence)
                        """,
                        [.key(update.user), .integer(conversation.id), try .sequence(sequence)])
                }
            }
        }
    }

    // MARK: Retention

    /// Removes what `policy` says is too many or too old at `now`, in one transaction; returns how many
    /// messages were removed. Without an index on time, the age limit reads every message: run it
    /// from time to time (minutes), not per message.
    public func applyRetention(_ policy: RetentionPolicy, now: Date) throws -> Int {
        let cutoff = policy.cutoffMilliseconds(now: now)
        guard policy.maxMessagesPerConversation != nil || cutoff != nil else { return 0 }
        return try withDatabase { database in
            try database.transaction {
                var removed = 0
                if let max = policy.maxMessagesPerConversation {
                    removed += try database.run(
                        "DELETE FROM messages WHERE sequence <= (SELECT head FROM conversations WHERE id = messages.conversation) - ?1",
                        [.integer(Int64(max))])
                }
                if let cutoff {
                    removed += try database.run("DELETE FROM messages WHERE time_ms < ?1", [.integer(cutoff)])
                }
                return removed
            }
        }
    }
}
