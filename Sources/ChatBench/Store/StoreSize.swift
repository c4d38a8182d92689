import CSQLite
import Foundation

/// How big an `im-server` store file is for the messages it holds (`chat-bench store-size FILE`): the
/// bytes of `FILE` and `FILE-wal` as found, then after a checkpoint that moves the write-ahead log into
/// the file and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`, https://sqlite.org/pragma.html#pragma_wal_checkpoint),
/// and the number of messages and bytes of text in it. Best run once the server has stopped; with the
/// server running the checkpoint may be partial (``checkpointComplete`` is false then).
public struct StoreSize: Sendable, Equatable {
    /// Bytes of `FILE` before the checkpoint.
    public var fileBytesBefore: Int
    /// Bytes of `FILE-wal` before the checkpoint (0 when there is none).
    public var walBytesBefore: Int
    /// Bytes of `FILE` after the checkpoint.
    public var fileBytes: Int
    /// Bytes of `FILE-wal` after the checkpoint (0 once truncated or removed).
    public var walBytes: Int
    /// Whether the checkpoint copied the whole log (no other connection held it back).
    public var checkpointComplete: Bool
    /// Rows of the `messages` table.
    public var messages: Int
    /// Bytes of UTF-8 text of those messages (SQLite's `length(CAST(text AS BLOB))`).
    public var textBytes: Int
    /// Pages of the file on its free list (space SQLite would reuse before growing the file).
    public var freePages: Int
    /// The file's page size in bytes.
    public var pageSize: Int

    /// Bytes of `FILE` + `FILE-wal` per 1,000 messages after the checkpoint (0 without messages).
    public var bytesPerThousandMessages: Double { messages > 0 ? Double(fileBytes + walBytes) * 1000 / Double(messages) : 0 }
    /// Bytes of `FILE` + `FILE-wal` per 1,000 messages as found, before the checkpoint.
    public var bytesPerThousandMessagesBefore: Double {
        messages > 0 ? Double(fileBytesBefore + walBytesBefore) * 1000 / Double(messages) : 0
    }

    /// A store file that could not be measured; `description` says why.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        /// What went wrong, naming the file.
        public let description: String
    }

    /// Measures the store at `path`, checkpointing it. Opens it read-write (never creating it).
    /// - Throws: ``Failure`` when the file is missing, is not an SQLite database with a `messages`
    ///   table, or SQLite fails.
    public static func measure(path: String) throws(Failure) -> StoreSize {
        guard let fileBytesBefore = bytes(of: path) else { throw Failure(description: "no file \(path)") }
        let walBytesBefore = bytes(of: path + "-wal") ?? 0
        var handle: OpaquePointer?
        let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil)
        defer { sqlite3_close_v2(handle) }
        guard opened == SQLITE_OK, let handle else {
            throw Failure(description: "cannot open \(path): \(String(cString: sqlite3_errstr(opened)))")
        }
        sqlite3_busy_timeout(handle, 5_000)
        let checkpoint = try integers("PRAGMA wal_checkpoint(TRUNCATE)", in: handle, path: path)
        let messages = try integers("SELECT count(*), coalesce(sum(length(CAST(text AS BLOB))), 0) FROM messages", in: handle, path: path)
        let freePages = try integers("PRAGMA freelist_count", in: handle, path: path)
        let pageSize = try integers("PRAGMA page_size", in: handle, path: path)
        return StoreSize(
            fileBytesBefore: fileBytesBefore, walBytesBefore: walBytesBefore,
            fileBytes: bytes(of: path) ?? 0, walBytes: bytes(of: path + "-wal") ?? 0,
            checkpointComplete: checkpoint.first == 0,
            messages: messages.first ?? 0, textBytes: messages.dropFirst().first ?? 0,
            freePages: freePages.first ?? 0, pageSize: pageSize.first ?? 0)
    }

    /// The size of the file at `path`, or nil when there is none.
    static func bytes(of path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    /// The integer columns of the first row of `sql`. sqlite3_prepare_v2(3), sqlite3_step(3).
    private static func integers(_ sql: String, in handle: OpaquePointer, path: String) throws(Failure) -> [Int] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard prepared == SQLITE_OK, let statement else {
            throw Failure(description: "\(path): \(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        let stepped = sqlite3_step(statement)
        guard stepped == SQLITE_ROW else {
            throw Failure(description: "\(path): \(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return (0..<sqlite3_column_count(statement)).map { Int(sqlite3_column_int64(statement, $0)) }
    }

    /// The RESULT line's fields, in order.
    public var fields: [(key: String, value: String)] {
        [
            ("mode", "store-size"), ("messages", "\(messages)"), ("text_bytes", "\(textBytes)"),
            ("file_bytes_before", "\(fileBytesBefore)"), ("wal_bytes_before", "\(walBytesBefore)"),
            ("file_bytes", "\(fileBytes)"), ("wal_bytes", "\(walBytes)"),
            ("checkpoint_complete", checkpointComplete ? "yes" : "no"),
            ("free_pages", "\(freePages)"), ("page_size", "\(pageSize)"),
            ("bytes_per_1000_before", Format.decimal(bytesPerThousandMessagesBefore, 0)),
            ("bytes_per_1000", Format.decimal(bytesPerThousandMessages, 0))
        ]
    }

    /// A few lines for people.
    public var summary: String {
        """
        store: \(Format.grouped(Double(messages))) messages, \(Format.grouped(Double(textBytes))) bytes of text
          as found: file \(Format.grouped(Double(fileBytesBefore))) B + wal \(Format.grouped(Double(walBytesBefore))) B = \
        \(Format.grouped(bytesPerThousandMessagesBefore)) B per 1,000 messages
          checkpointed\(checkpointComplete ? "" : " (partly: another connection held the log)"): file \
        \(Format.grouped(Double(fileBytes))) B + wal \(Format.grouped(Double(walBytes))) B = \
        \(Format.grouped(bytesPerThousandMessages)) B per 1,000 messages (\(freePages) free pages of \(pageSize) B)
        """
    }
}
