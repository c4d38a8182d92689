extension SQLiteMessageStore {
    /// The version of the file layout below (`PRAGMA user_version`). A file with a higher version is
    /// refused (``StoreError/unsupportedSchemaVersion(found:supported:)``); a later version of this
    /// program migrates lower ones.
    public static let schemaVersion: Int32 = 1

    /// `PRAGMA application_id` of a server store file: `"IMCS"` in ASCII (0x494D4353), so `file(1)`
    /// and this program tell it from other SQLite files (the client's is ``SQLiteDeliveryStateStore/applicationID``).
    public static let applicationID: Int32 = 0x494D_4353

    /// Version 1. Names are kept in Unicode NFC, so equal names in Swift are equal in SQL. Times are
    /// milliseconds since 1970 (UTC). Sequences fit SQLite's signed 64-bit integers; client ids are
    /// stored by bit pattern (ids above `Int64.max` read as negative in SQL, and only their equality
    /// matters). `conversations.head` is the last sequence ever given, so retention, which deletes
    /// messages, never makes a sequence be given twice.
    static let schema = """
        CREATE TABLE users (
            name TEXT PRIMARY KEY NOT NULL,
            password_hash TEXT,
            room_start INTEGER NOT NULL,
            created_ms INTEGER NOT NULL
        );
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
}
