import CSQLite
import Foundation

/// A value bound to, or read from, an SQL statement.
package enum SQLiteValue: Equatable {
    case integer(Int64)
    case text(String)
    case blob(Data)
    case null
}

/// A thin wrapper over one SQLite connection (https://sqlite.org/cintro.html): open, run SQL, prepared
/// statements (cached by their text) with bind / step / column, and transactions; every failure is an
/// ``SQLiteError`` with the result code and `sqlite3_errmsg` text.
///
/// Threading: not thread-safe. The connection is opened `SQLITE_OPEN_NOMUTEX`, so its owner must make
/// one call at a time (the stores hold it in a ``LockedValue``).
package final class SQLiteDatabase {
    /// The file, as given to ``init(path:)``.
    package let path: String
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the database file at `path`, with extended result codes and a 5 s
    /// busy timeout (another connection writing waits that long before `SQLITE_BUSY`). SQLite reads
    /// nothing yet: a file that is not a database fails at the first statement (`SQLITE_NOTADB`).
    /// sqlite3_open_v2(3), sqlite3_busy_timeout(3).
    package init(path: String) throws(SQLiteError) {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_close_v2(handle)
            throw SQLiteError(extendedCode: result, message: message, operation: "open \(path)")
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the connection (a WAL database is checkpointed and
    /// its `-wal` file removed when this was the last connection). Later calls throw `SQLITE_MISUSE`.
    /// sqlite3_close_v2(3).
    package func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func open(for operation: String) throws(SQLiteError) -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "the database is closed", operation: operation)
        }
        return handle
    }

    private func error(_ result: Int32, _ operation: String) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
        return SQLiteError(extendedCode: result, message: message, operation: operation)
    }

    /// Runs `sql`, one or more statements separated by `;`, without results (schema scripts, pragmas
    /// that set). sqlite3_exec(3).
    package func execute(_ sql: String) throws(SQLiteError) {
        let handle = try open(for: sql)
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result, sql) }
    }

    /// Runs one statement with `bindings` (for `?1`, `?2`, …) and returns its rows made by `row`.
    package func query<Row>(_ sql: String, _ bindings: [SQLiteValue] = [], row: (SQLiteRow) throws -> Row) throws -> [Row] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(bindings, to: statement, sql)
        var rows: [Row] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return rows }
            guard result == SQLITE_ROW else { throw error(result, sql) }
            rows.append(try row(SQLiteRow(statement: statement, sql: sql)))
        }
    }

    /// Runs one statement with `bindings` and returns how many rows it inserted, changed or deleted.
    /// sqlite3_changes64(3).
    @discardableResult
    package func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(bindings, to: statement, sql)
        var result = sqlite3_step(statement)
        while result == SQLITE_ROW { result = sqlite3_step(statement) }  // PRAGMAs that set answer a row
        guard result == SQLITE_DONE else { throw error(result, sql) }
        return Int(sqlite3_changes64(try open(for: sql)))
    }

    /// The first column of the first row of `sql` as an integer; nil if there is no row or it is NULL.
    package func integer(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int64? {
        try query(sql, bindings) { row in row.isNull(0) ? nil : row.integer(0) }.first ?? nil
    }

    /// The first column of the first row of `sql` as text; nil if there is no row or it is NULL.
    package func text(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> String? {
        try query(sql, bindings) { row in row.isNull(0) ? nil : row.text(0) }.first ?? nil
    }

    /// Runs `body` in one transaction: `BEGIN IMMEDIATE` (takes the write lock at once, so the commit
    /// cannot fail for a lock another connection took meanwhile), then `COMMIT`, or `ROLLBACK` if
    /// `body` throws (rethrown). Not nestable.
    package func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try run("BEGIN IMMEDIATE")
        let result: Result
        do {
            result = try body()
            try run("COMMIT")
        } catch {
            // A failed COMMIT may have rolled back already; then this ROLLBACK fails harmlessly.
            _ = try? run("ROLLBACK")
            throw error
        }
        return result
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        let handle = try open(for: sql)
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw error(result, sql)
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ values: [SQLiteValue], to statement: OpaquePointer, _ sql: String) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let integer):
                result = sqlite3_bind_int64(statement, index, integer)
            case .text(let text):
                // utf8CString has a non-null address even when empty (a null one would bind NULL).
                result = text.utf8CString.withUnsafeBufferPointer { bytes in
                    sqlite3_bind_text64(
                        statement, index, bytes.baseAddress, UInt64(bytes.count - 1), csqlite_transient(), UInt8(SQLITE_UTF8))
                }
            case .blob(let data):
                if data.isEmpty {
                    result = sqlite3_bind_zeroblob(statement, index, 0)
                } else {
                    result = data.withUnsafeBytes { bytes in
                        sqlite3_bind_blob64(statement, index, bytes.baseAddress, UInt64(bytes.count), csqlite_transient())
                    }
                }
            case .null:
                result = sqlite3_bind_null(statement, index)
            }
            guard result == SQLITE_OK else { throw error(result, sql) }
        }
    }
}

/// The current row of a statement being stepped; valid only inside the `row` closure of
/// ``SQLiteDatabase/query(_:_:row:)``. Columns count from 0.
package struct SQLiteRow {
    fileprivate let statement: OpaquePointer
    /// The statement's SQL, for error messages.
    let sql: String

    /// Whether column `index` is NULL.
    package func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    /// Column `index` as an integer (NULL reads as 0). sqlite3_column_int64(3).
    package func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

    /// Column `index` as a non-negative integer, or ``StoreError/corrupt(_:)`` naming `what`.
    package func unsigned(_ index: Int32, _ what: String) throws(StoreError) -> UInt64 {
        let value = integer(index)
        guard !isNull(index), let unsigned = UInt64(exactly: value) else {
            throw StoreError.corrupt("\(what) is \(isNull(index) ? "NULL" : String(value))")
        }
        return unsigned
    }

    /// Column `index` as UTF-8 text (NULL reads as ""; invalid UTF-8 is repaired with U+FFFD).
    /// sqlite3_column_text(3).
    package func text(_ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes (NULL reads as empty). sqlite3_column_blob(3).
    package func blob(_ index: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(statement, index) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, index)))
    }
}
