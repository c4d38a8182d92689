import AsyncSocket
import ChatSQLite
import Foundation
import LongLink

/// The chat client's ``DeliveryStateStore``: its outbox, next message id, positions and client
/// instance id in one SQLite file (`im-client --data-dir DIR` keeps it there), in WAL mode, so a
/// client killed with `kill -9` loses nothing it had accepted and shows nothing twice after a restart.
/// Durability as ``SQLiteMessageStore`` describes for ``SQLiteSynchronous`` (default `.normal`:
/// survives a crash of the process; a power loss may undo the last commits).
///
/// One client process per file: the client instance id identifies one sender to the server, and two
/// processes sharing it would give the same ids to different messages.
///
/// Threading: the connection lives behind a lock, so each method is atomic and may be called from any
/// thread (the link calls `load()` where it is created and the others on its store queue, never on its
/// loop: ``DeliveryStateStore``).
///
/// Errors: ``SQLiteError`` when SQLite fails; ``StoreError`` when opening (another kind of file, a
/// later schema) and for values this program never writes (``StoreError/corrupt(_:)``) or cannot
/// (``StoreError/outOfRange(_:)``: ids above `Int64.max`).
public final class SQLiteDeliveryStateStore: DeliveryStateStore {
    /// The version of the file layout (`PRAGMA user_version`); later ones are refused.
    public static let schemaVersion: Int32 = 1

    /// `PRAGMA application_id` of a client file: `"IMCC"` in ASCII (0x494D4343).
    public static let applicationID: Int32 = 0x494D_4343

    /// Version 1: one row of `state`; the outbox by id (frames as the codec encoded them); positions by
    /// conversation text form.
    static let schema = """
        CREATE TABLE state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            client_instance TEXT NOT NULL,
            next_id INTEGER NOT NULL
        );
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            frame BLOB NOT NULL
        );
        CREATE TABLE positions (
            conversation TEXT PRIMARY KEY NOT NULL,
            sequence INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// The file, as given.
    public let path: String
    /// This client's instance id: 128 random bits as 32 lowercase hex digits, made when the file was
    /// created and the same every time it is opened. Sent with the login; the server de-duplicates by
    /// (name, instance, message id).
    public let clientInstance: String
    private let database: LockedValue<SQLiteDatabase>

    /// Opens the client state at `path`, creating the file (not its directory) with a new client
    /// instance id and next id 1 if missing.
    /// - Throws: ``SQLiteError`` (`SQLITE_CANTOPEN`, `SQLITE_NOTADB`), ``StoreError/notAStore(path:)``,
    ///   ``StoreError/unsupportedSchemaVersion(found:supported:)``, ``StoreError/corrupt(_:)``.
    public init(path: String, synchronous: SQLiteSynchronous = .normal) throws {
        self.path = path
        let database = try SQLiteDatabase.openStore(
            path: path, applicationID: Self.applicationID, schemaVersion: Self.schemaVersion,
            schema: Self.schema, synchronous: synchronous)
        clientInstance = try database.transaction {
            if let instance = try database.text("SELECT client_instance FROM state WHERE id = 1") {
                guard Self.isClientInstance(instance) else { throw StoreError.corrupt("client instance \(instance.debugDescription)") }
                return instance
            }
            let instance = Self.makeClientInstance()
            try database.run("INSERT INTO state (id, client_instance, next_id) VALUES (1, ?1, 1)", [.text(instance)])
            return instance
        }
        self.database = LockedValue(database)
    }

    /// A new client instance id: 16 bytes from the system's random generator (getrandom(2)) as 32
    /// lowercase hex digits.
    static func makeClientInstance() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
    }

    /// Whether `text` is 32 lowercase hex digits.
    static func isClientInstance(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Closes the file; later calls throw ``SQLiteError`` `SQLITE_MISUSE`. Also done when released.
    public func close() {
        database.withLock { $0.close() }
    }

    private func withDatabase<Result>(_ body: (SQLiteDatabase) throws -> Result) throws -> Result {
        try database.withLock { try body($0) }
    }

    /// The next id, the outbox by ascending id, and the positions.
    public func load() throws -> DeliveryState {
        try withDatabase { database in
            try database.transaction {
                let nextID = try database.query("SELECT next_id FROM state WHERE id = 1") { row in
                    try row.unsigned(0, "next id")
                }.first
                guard let nextID else { throw StoreError.corrupt("no state row") }
                let outbox = try database.query("SELECT id, frame FROM outbox ORDER BY id") { row in
                    OutboxEntry(id: try row.unsigned(0, "outbox id"), frame: row.blob(1))
                }
                var positions: [String: UInt64] = [:]
                for (conversation, sequence) in try database.query(
                    "SELECT conversation, sequence FROM positions",
                    row: { row in
                        (row.text(0), try row.unsigned(1, "position of \(row.text(0))"))
                    })
                {
                    positions[conversation] = sequence
                }
                return DeliveryState(nextID: nextID, outbox: outbox, positions: positions)
            }
        }
    }

    /// Adds message `id` with its encoded `frame` to the outbox and moves the next id past `id` (it
    /// never moves back), in one transaction.
    /// - Throws: ``SQLiteError`` `SQLITE_CONSTRAINT` if `id` is in the outbox already;
    ///   ``StoreError/outOfRange(_:)`` for `id` ≥ `Int64.max`.
    public func enqueue(id: UInt64, frame: Data) throws {
        guard id < UInt64(Int64.max) else { throw StoreError.outOfRange("message id \(id)") }
        try withDatabase { database in
            try database.transaction {
                try database.run("INSERT INTO outbox (id, frame) VALUES (?1, ?2)", [.integer(Int64(id)), .blob(frame)])
                try database.run("UPDATE state SET next_id = max(next_id, ?1) WHERE id = 1", [.integer(Int64(id) + 1)])
            }
        }
    }

    /// Removes these ids from the outbox, in one transaction; ids not in it are ignored.
    public func remove(ids: [UInt64]) throws {
        guard !ids.isEmpty else { return }
        try withDatabase { database in
            try database.transaction {
                for id in ids {
                    guard let id = Int64(exactly: id) else { continue }  // never enqueued
                    try database.run("DELETE FROM outbox WHERE id = ?1", [.integer(id)])
                }
            }
        }
    }

    /// Records these positions (conversation text form → last sequence received), in one
    /// transaction; conversations not in `positions` keep theirs. A position is stored as given, even
    /// lower than before (the link decides).
    /// - Throws: ``StoreError/outOfRange(_:)`` for a sequence above `Int64.max` (nothing recorded then).
    public func setPositions(_ positions: [String: UInt64]) throws {
        guard !positions.isEmpty else { return }
        try withDatabase { database in
            try database.transaction {
                for (conversation, sequence) in positions {
                    try database.run(
                        "INSERT INTO positions (conversation, sequence) VALUES (?1, ?2) ON CONFLICT (conversation) DO UPDATE SET sequence = excluded.sequence",
                        [.text(conversation), try .sequence(sequence)])
                }
            }
        }
    }
}
