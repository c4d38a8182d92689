import ChatProtocol
import ChatSQLite

extension SQLiteMessageStore {
    /// The version of the file layout below (`PRAGMA user_version`): 2. A file with a higher version is
    /// refused (``StoreError/unsupportedSchemaVersion(found:supported:)``); a lower one is migrated
    /// when opened (``migrations``).
    public static let schemaVersion: Int32 = 2

    /// `PRAGMA application_id` of a server store file: `"IMCS"` in ASCII (0x494D4353), so `file(1)`
    /// and this program tell it from other SQLite files (the client's is ``SQLiteDeliveryStateStore/applicationID``).
    public static let applicationID: Int32 = 0x494D_4353

    /// Version 2. Names are kept in Unicode NFC, so equal names in Swift are equal in SQL; each user
    /// has its name's ``UserName/Key`` (`key_folded`, `key_cased`), by which ``user(named:)`` finds
    /// a user under another spelling; the keys depend on ICU's version, so they are computed again
    /// when the `name_keys` setting differs from ``UserName/keyVersion`` (``refreshNameKeys(in:)``).
    /// The key indexes are not unique: a file of version 1 may hold two users whose names have the
    /// same key now (docs/PROTOCOL.md "Names"). Times are milliseconds since 1970 (UTC). Sequences fit
    /// SQLite's signed 64-bit integers; client ids are stored by bit pattern (ids above `Int64.max`
    /// read as negative in SQL, and only their equality matters). `conversations.head` is the last
    /// sequence ever given, so retention, which deletes messages, never makes a sequence be given twice.
    static let schema = """
        CREATE TABLE users (
            name TEXT PRIMARY KEY NOT NULL,
            password_hash TEXT,
            room_start INTEGER NOT NULL,
            created_ms INTEGER NOT NULL,
            key_folded TEXT NOT NULL,
            key_cased TEXT NOT NULL
        );
        CREATE INDEX users_key_folded ON users (key_folded);
        CREATE INDEX users_key_cased ON users (key_cased);
        CREATE TABLE settings (
            name TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            member_a TEXT,
            member_b TEXT,
            head INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX conversations_member_a ON conversations (member_a);
        CREATE INDEX conversations_member_b ON conversations (member_b);
        CREATE TABLE messages (
            conversation INTEGER NOT NULL REFERENCES conversations (id),
            sequence INTEGER NOT NULL,
            sender TEXT NOT NULL,
            text TEXT NOT NULL,
            time_ms INTEGER NOT NULL,
            client_instance TEXT NOT NULL,
            client_id INTEGER NOT NULL,
            PRIMARY KEY (conversation, sequence)
        );
        CREATE UNIQUE INDEX messages_client_id ON messages (sender, client_instance, client_id);
        CREATE TABLE positions (
            user TEXT NOT NULL,
            conversation INTEGER NOT NULL REFERENCES conversations (id),
            sequence INTEGER NOT NULL,
            PRIMARY KEY (user, conversation)
        ) WITHOUT ROWID;
        """

    /// SQL that takes a file from version n (the key) to n + 1, in the open's transaction. 1 → 2: the
    /// users' name keys (empty until ``refreshNameKeys(in:)``, run next when the store opens, fills them in) and
    /// the settings table.
    static let migrations: [Int32: String] = [
        1: """
        ALTER TABLE users ADD COLUMN key_folded TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN key_cased TEXT NOT NULL DEFAULT '';
        CREATE INDEX users_key_folded ON users (key_folded);
        CREATE INDEX users_key_cased ON users (key_cased);
        CREATE TABLE settings (
            name TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """
    ]

    /// Computes every user's name keys again, in one transaction, unless the `name_keys` setting says
    /// they were computed with the current rules and ICU (``UserName/keyVersion``); then records it.
    /// Run when the store is opened: after a migration from version 1, and after an upgrade of ICU,
    /// whose confusables table may have changed.
    static func refreshNameKeys(in database: SQLiteDatabase) throws {
        let version = UserName.keyVersion
        try database.transaction {
            guard try database.text("SELECT value FROM settings WHERE name = 'name_keys'") != version else { return }
            let users = try database.query("SELECT rowid, name FROM users") { row in (row.integer(0), row.text(1)) }
            for (rowid, name) in users {
                let key = UserName.Key(name)
                try database.run(
                    "UPDATE users SET key_folded = ?1, key_cased = ?2 WHERE rowid = ?3",
                    [.text(key.folded), .text(key.cased), .integer(rowid)])
            }
            try database.run(
                "INSERT INTO settings (name, value) VALUES ('name_keys', ?1) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                [.text(version)])
        }
    }
}
