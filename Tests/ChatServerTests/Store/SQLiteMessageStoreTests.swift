@testable import ChatClient
@testable import ChatProtocol
@testable import ChatSQLite
@testable import ChatServer
import ChatTestSupport
import Foundation
import Testing
import TestSupport

/// What only the SQLite store does: keep data across close and reopen, WAL, its file format and its errors.
@Suite(.offThePool) struct SQLiteMessageStoreTests {
    let annBob = ConversationID(between: "ann", and: "bob")

    @Test func dataSurvivesCloseAndReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            let store = try SQLiteMessageStore(path: path)
            _ = try store.createUser(named: "ann", passwordHash: "H", at: storeEpoch)
            _ = try store.createUser(named: "bob", passwordHash: nil, at: storeEpoch)
            _ = try store.append([.make("ann", in: annBob, id: 1), .make("ann", in: annBob, id: 2), .make("bob", in: .room, id: 1)])
            try store.setPositions([(user: "bob", conversation: annBob, sequence: 1)])
            let before = try store.messages(in: annBob, after: 0, limit: 10)
            store.close()
            #expect(FileManager.default.fileExists(atPath: path + "-wal") == false)

            let reopened = try SQLiteMessageStore(path: path)
            defer { reopened.close() }
            #expect(try reopened.messages(in: annBob, after: 0, limit: 10) == before)
            #expect(try reopened.user(named: "ann") == UserRecord(name: "ann", passwordHash: "H", roomStart: 0, created: storeEpoch))
            #expect(try reopened.position(of: "bob", in: annBob) == 1)
            #expect(try reopened.directConversations(of: "bob") == [annBob])
            #expect(
                try reopened.append([.make("ann", in: annBob, id: 2), .make("ann", in: annBob, id: 3)]) == [
                    .duplicate(sequence: 2), .stored(sequence: 3)
                ])
            #expect(try reopened.head(of: .room) == 1)
        }
    }

    @Test func theFileIsInWALModeWithTheChosenSynchronousSetting() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            let store = try SQLiteMessageStore(path: path)
            _ = try store.createUser(named: "ann", passwordHash: nil, at: storeEpoch)
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(try store.withDatabase { try $0.journalMode() } == "wal")
            #expect(try store.withDatabase { try $0.synchronousSetting() } == 1)  // NORMAL
            // A second connection sees WAL too: the mode is kept in the file.
            let other = try SQLiteDatabase(path: path)
            #expect(try other.journalMode() == "wal")
            other.close()
            store.close()

            let full = try SQLiteMessageStore(path: path, synchronous: .full)
            defer { full.close() }
            #expect(full.synchronous == .full)
            #expect(try full.withDatabase { try $0.synchronousSetting() } == 2)  // FULL
        }
    }

    @Test func theSchemaIsVersionedAndTheFileNamedAsAChatStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            try SQLiteMessageStore(path: path).close()
            let database = try SQLiteDatabase(path: path)
            #expect(try database.schemaVersion() == 2)
            #expect(try database.integer("PRAGMA application_id") == 0x494D_4353)
            #expect(
                try database.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") { $0.text(0) }
                    == ["conversations", "messages", "positions", "settings", "users"])
            // A later version of the program wrote this file.
            try database.execute("PRAGMA user_version = 3")
            database.close()
            #expect(throws: StoreError.unsupportedSchemaVersion(found: 3, supported: 2)) { try SQLiteMessageStore(path: path) }
        }
    }

    @Test func otherSQLiteFilesAreNotStores() throws {
        try withTemporaryDirectory { directory in
            let foreign = directory.appendingPathComponent("foreign.sqlite").path
            let database = try SQLiteDatabase(path: foreign)
            try database.execute("CREATE TABLE notes (text TEXT)")
            database.close()
            #expect(throws: StoreError.notAStore(path: foreign)) { try SQLiteMessageStore(path: foreign) }

            let client = directory.appendingPathComponent("client.sqlite").path
            try SQLiteDeliveryStateStore(path: client).close()
            #expect(throws: StoreError.notAStore(path: client)) { try SQLiteMessageStore(path: client) }
            #expect(throws: StoreError.notAStore(path: foreign)) { try SQLiteDeliveryStateStore(path: foreign) }
        }
    }

    @Test func aFileThatIsNotADatabaseIsATypedErrorAndIsLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("notes.txt").path
            let text = Data(String(repeating: "these are my notes, not a database\n", count: 100).utf8)
            try text.write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: SQLiteError.self) { try SQLiteMessageStore(path: path) }
            #expect(error?.code == 26)  // SQLITE_NOTADB
            #expect(error?.message == "file is not a database")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
        }
    }

    @Test func aMissingDirectoryAndAClosedStoreAreTypedErrors() throws {
        try withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("no/such/dir/chat.sqlite").path
            let error = #expect(throws: SQLiteError.self) { try SQLiteMessageStore(path: missing) }
            #expect(error?.code == 14)  // SQLITE_CANTOPEN
            #expect(error?.operation == "open \(missing)")

            let store = try SQLiteMessageStore(path: directory.appendingPathComponent("chat.sqlite").path)
            store.close()
            let closed = #expect(throws: SQLiteError.self) { try store.head(of: .room) }
            #expect(closed?.code == 21)  // SQLITE_MISUSE
        }
    }

    @Test func theFileHoldsThePasswordHashNotThePassword() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            let password = "correct horse battery staple"
            // The minimum Argon2id limits keep the test fast; the format is the same.
            let hash = try PasswordHasher(limits: .minimum).hash(password)
            let store = try SQLiteMessageStore(path: path)
            _ = try store.createUser(named: "ann", passwordHash: hash, at: storeEpoch)
            store.close()
            let file = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(file.range(of: Data(hash.utf8)) != nil)
            #expect(file.range(of: Data(password.utf8)) == nil)
            #expect(try SQLiteMessageStore(path: path).user(named: "ann")?.passwordHash == hash)
        }
    }
}
