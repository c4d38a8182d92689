/// An SQLite call failed: its result code and SQLite's message for it (sqlite3_errmsg(3)), with what
/// was being done. Codes are SQLite's (https://sqlite.org/rescode.html); the common ones for a store:
/// 5 `SQLITE_BUSY` (another process holds the file's write lock longer than the 5 s busy timeout),
/// 13 `SQLITE_FULL` (disk full), 14 `SQLITE_CANTOPEN`, 19 `SQLITE_CONSTRAINT`, 21 `SQLITE_MISUSE`
/// (used after ``SQLiteMessageStore/close()``), 26 `SQLITE_NOTADB` (the file is not a database).
public struct SQLiteError: Error, Sendable, Equatable {
    /// The primary result code (the low 8 bits of ``extendedCode``): 26 for `SQLITE_NOTADB`.
    public var code: Int32
    /// The extended result code (https://sqlite.org/rescode.html#extrc): 2067
    /// `SQLITE_CONSTRAINT_UNIQUE`, for example.
    public var extendedCode: Int32
    /// SQLite's English description of the error (sqlite3_errmsg(3)): `file is not a database`.
    public var message: String
    /// What was being done: `open /path/chat.sqlite`, or the SQL statement.
    public var operation: String

    /// An error with these values; `code` is the low 8 bits of `extendedCode`.
    public init(extendedCode: Int32, message: String, operation: String) {
        self.code = extendedCode & 0xFF
        self.extendedCode = extendedCode
        self.message = message
        self.operation = operation
    }
}

extension SQLiteError: CustomStringConvertible {
    /// `sqlite error 26 (file is not a database) in: open /path/chat.sqlite`.
    public var description: String {
        "sqlite error \(extendedCode) (\(message)) in: \(operation)"
    }
}
