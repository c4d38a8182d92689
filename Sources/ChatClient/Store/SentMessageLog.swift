import AsyncSocket
import ChatSQLite
import Foundation

/// What the chat client's own messages became on the server, kept next to its outbox (one SQLite file,
/// WAL) so it survives a restart: for each message the server stored, its client id and its place (the
/// conversation and sequence number from the `stored` answer), and per direct conversation how far
/// delivery receipts have been shown.
///
/// The client uses it to turn a receipt ("bob has everything of `direct:ann bob` up to 6") into its own
/// message ids (#17, #18), each shown once, also after a restart; and to recognise its own messages
/// when the server delivers them back (same conversation and sequence number) so they are not shown
/// twice.
///
/// Bounded: it keeps the ``capacity`` most recent messages (by id); older ones are forgotten, so a
/// receipt or an echo for one of them is no longer matched (a receipt is then not shown; an echo is
/// shown as a message from another device).
///
/// Threading: the connection lives behind a lock, so each method is atomic and may be called from any
/// thread (the client calls them on its own queue).
///
/// Errors: ``SQLiteError`` when SQLite fails; ``StoreError`` when opening (another kind of file, a
/// later schema), for values this program never writes (``StoreError/corrupt(_:)``) or cannot
/// (``StoreError/outOfRange(_:)``: numbers above `Int64.max`).
public final class SentMessageLog: Sendable {
    /// The version of the file layout (`PRAGMA user_version`); later ones are refused.
    public static let schemaVersion: Int32 = 1
    /// `PRAGMA application_id` of a sent-message log: `"IMCS"` in ASCII (0x494D4353).
    public static let applicationID: Int32 = 0x494D_4353
    /// The most messages kept: 10,000 (the outbox's limit, so a full outbox stored at once still matches
    /// every receipt).
    public static let defaultCapacity = 10_000

    /// Version 1: stored messages by place, and the receipt shown last per conversation.
    static let schema = """
        CREATE TABLE sent (
            conversation TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            id INTEGER NOT NULL,
            PRIMARY KEY (conversation, sequence)
        ) WITHOUT ROWID;
        CREATE INDEX sent_by_id ON sent (id);
        CREATE TABLE receipts (
            conversation TEXT PRIMARY KEY NOT NULL,
            sequence INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// The file, as given.
    public let path: String
    /// The most messages kept (at least 1); older ones are removed as new ones are recorded.
    public let capacity: Int
    private let database: LockedValue<SQLiteDatabase>
    /// Records since the last trim (trimming runs every 100 records, not every one).
    private let recordsSinceTrim = LockedValue(0)

    /// Opens the log at `path`, creating the file (not its directory) if missing.
    /// - Throws: ``SQLiteError`` (`SQLITE_CANTOPEN`, `SQLITE_NOTADB`), ``StoreError/notAStore(path:)``,
    ///   ``StoreError/unsupportedSchemaVersion(found:supported:)``.
    public init(path: String, capacity: Int = SentMessageLog.defaultCapacity, synchronous: SQLiteSynchronous = .normal) throws {
        self.path = path
        self.capacity = max(capacity, 1)
        database = LockedValue(
            try SQLiteDatabase.openStore(
                path: path, applicationID: Self.applicationID, schemaVersion: Self.schemaVersion,
                schema: Self.schema, synchronous: synchronous))
    }

    /// Closes the file; later calls throw ``SQLiteError`` `SQLITE_MISUSE`. Also done when released.
    public func close() {
        database.withLock { $0.close() }
    }

    /// Records that message `id` is number `sequence` of `conversation` (the conversation's text form).
    /// Recording the same place again replaces its id.
    public func record(id: UInt64, conversation: String, sequence: UInt64) throws {
        guard let id = Int64(exactly: id) else { throw StoreError.outOfRange("message id \(id)") }
        let trim = recordsSinceTrim.withLock { count in
            count += 1
            if count >= 100 { count = 0 }
            return count == 0
        }
        try database.withLock { database in
            try database.transaction {
                try database.run(
                    "INSERT INTO sent (conversation, sequence, id) VALUES (?1, ?2, ?3) ON CONFLICT (conversation, sequence) DO UPDATE SET id = excluded.id",
                    [.text(conversation), try .sequence(sequence), .integer(id)])
                if trim { try Self.trim(database, to: capacity) }
            }
        }
    }

    /// Removes all but the `capacity` highest ids.
    private static func trim(_ database: SQLiteDatabase, to capacity: Int) throws {
        try database.run(
            "DELETE FROM sent WHERE id < (SELECT id FROM sent ORDER BY id DESC LIMIT 1 OFFSET ?1)",
            [.integer(Int64(capacity - 1))])
    }

    /// The id of the message recorded as number `sequence` of `conversation`, if any.
    public func id(conversation: String, sequence: UInt64) throws -> UInt64? {
        guard let sequence = Int64(exactly: sequence) else { return nil }
        return try database.withLock { database in
            try database.query(
                "SELECT id FROM sent WHERE conversation = ?1 AND sequence = ?2",
                [.text(conversation), .integer(sequence)]
            ) { row in
                try row.unsigned(0, "message id")
            }.first
        }
    }

    /// A receipt: the other user has received `conversation` up to `upTo`. Returns the ids of the
    /// recorded messages it newly covers (numbered above the last receipt recorded for the
    /// conversation, at most `upTo`), in sequence order, and records `upTo` as shown (it never moves
    /// back). A receipt at or below the last one returns nothing.
    public func receipt(conversation: String, upTo: UInt64) throws -> [UInt64] {
        let upTo = try SQLiteValue.sequence(upTo)
        return try database.withLock { database in
            try database.transaction {
                let shown = try database.integer("SELECT sequence FROM receipts WHERE conversation = ?1", [.text(conversation)]) ?? 0
                guard case .integer(let limit) = upTo, limit > shown else { return [] }
                let ids = try database.query(
                    "SELECT id FROM sent WHERE conversation = ?1 AND sequence > ?2 AND sequence <= ?3 ORDER BY sequence",
                    [.text(conversation), .integer(shown), upTo]
                ) { row in try row.unsigned(0, "message id") }
                try database.run(
                    "INSERT INTO receipts (conversation, sequence) VALUES (?1, ?2) ON CONFLICT (conversation) DO UPDATE SET sequence = excluded.sequence",
                    [.text(conversation), upTo])
                return ids
            }
        }
    }

    /// The number of messages recorded now.
    public func count() throws -> Int {
        try database.withLock { database in Int(try database.integer("SELECT count(*) FROM sent") ?? 0) }
    }
}
