import CSQLite

/// How hard an SQLite store makes each commit durable (`PRAGMA synchronous`,
/// https://sqlite.org/pragma.html#pragma_synchronous), in WAL mode, which the stores always use.
///
/// Both survive a crash of the process (`kill -9`, a fault): a committed transaction is in the
/// operating system's cache and reaches the file whatever becomes of the process. They differ when the
/// whole machine stops (power loss, kernel panic) before the cache is written out:
public enum SQLiteSynchronous: String, Sendable, CaseIterable {
    /// `NORMAL` (the default): the write-ahead log is synced (fsync(2)) only at checkpoints, so a power
    /// loss may undo the last transactions committed before it (messages already acknowledged to
    /// their senders), never corrupt the file. One write a commit, no wait for the disk.
    case normal = "NORMAL"
    /// `FULL`: the log is synced at every commit, so a committed transaction survives power loss too;
    /// each commit waits for the disk (one fsync per batch, since a batch is one transaction).
    case full = "FULL"
}

extension SQLiteDatabase {
    /// What a file holds, as far as opening a store is concerned.
    private enum Contents {
        /// A new, empty database: create the schema.
        case empty
        /// A store of this kind, at this schema version.
        case store(version: Int32)
    }

    /// Opens the store file at `path` (created if missing): checks it is a store of this kind
    /// (`PRAGMA application_id` = `applicationID`, schema version at most `schemaVersion`), switches it to
    /// WAL with `synchronous`, and on a new file runs `schema` and sets `PRAGMA user_version` to
    /// `schemaVersion`, in one transaction. A file of an older version is migrated in one transaction:
    /// `migrations[n]` takes it from version n to n + 1, up to `schemaVersion`.
    /// - Throws: ``SQLiteError`` (`SQLITE_NOTADB` for a file that is not a database, `SQLITE_CANTOPEN`
    ///   for a missing directory or no permission); ``StoreError/notAStore(path:)``;
    ///   ``StoreError/unsupportedSchemaVersion(found:supported:)`` (also for an older version without
    ///   its migration).
    package static func openStore(
        path: String, applicationID: Int32, schemaVersion: Int32, schema: String, migrations: [Int32: String] = [:],
        synchronous: SQLiteSynchronous
    ) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        _ = try database.contents(applicationID: applicationID, schemaVersion: schemaVersion)
        let mode = try database.text("PRAGMA journal_mode = WAL")
        guard mode == "wal" else {
            throw SQLiteError(
                extendedCode: SQLITE_ERROR, message: "journal mode is \(mode ?? "unknown"), not wal", operation: "PRAGMA journal_mode = WAL"
            )
        }
        try database.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        try database.transaction {
            // Again inside the write lock: another process may have created the schema meanwhile.
            switch try database.contents(applicationID: applicationID, schemaVersion: schemaVersion) {
            case .empty:
                try database.execute(schema)
                try database.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(schemaVersion)")
            case .store(let version):
                for from in version..<schemaVersion {
                    guard let migration = migrations[from] else {
                        throw StoreError.unsupportedSchemaVersion(found: version, supported: schemaVersion)
                    }
                    try database.execute(migration)
                }
                if version < schemaVersion { try database.execute("PRAGMA user_version = \(schemaVersion)") }
            }
        }
        return database
    }

    private func contents(applicationID: Int32, schemaVersion: Int32) throws -> Contents {
        let foundID = Int32(truncatingIfNeeded: try integer("PRAGMA application_id") ?? 0)
        let version = Int32(truncatingIfNeeded: try integer("PRAGMA user_version") ?? 0)
        if foundID == applicationID {
            guard version <= schemaVersion else {
                throw StoreError.unsupportedSchemaVersion(found: version, supported: schemaVersion)
            }
            return .store(version: version)
        }
        let tables = try integer("SELECT count(*) FROM sqlite_schema") ?? 0
        guard foundID == 0, version == 0, tables == 0 else { throw StoreError.notAStore(path: path) }
        return .empty
    }

    /// The journal mode (`wal` for the stores). `PRAGMA journal_mode`.
    package func journalMode() throws -> String? { try text("PRAGMA journal_mode") }

    /// The synchronous setting: 1 `NORMAL`, 2 `FULL`. `PRAGMA synchronous`.
    package func synchronousSetting() throws -> Int64? { try integer("PRAGMA synchronous") }

    /// The schema version. `PRAGMA user_version`.
    package func schemaVersion() throws -> Int64? { try integer("PRAGMA user_version") }
}
