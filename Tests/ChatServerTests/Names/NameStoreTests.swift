@testable import ChatProtocol
@testable import ChatSQLite
@testable import ChatServer
import ChatTestSupport
import Foundation
import Testing
import TestSupport

/// The stores find a user by its name's key (``UserName/Key``), in memory, in SQLite and in JetStream, across a
/// restart, and in a file of schema version 1, migrated.
@Suite(.offThePool) struct NameStoreTests {
    @Test(arguments: StoreKind.allCases)
    func aUserIsFoundUnderEverySpellingOfItsNameAndNoLookAlikeIsCreated(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try store.createUser(named: "ann", passwordHash: nil, at: storeEpoch)
            _ = try store.createUser(named: "Il", passwordHash: nil, at: storeEpoch)
            for spelling in ["ann", "ANN", "Ann", "\u{0430}nn", "ａｎｎ"] {
                #expect(try store.user(named: spelling)?.name == "ann", "\(spelling)")
                #expect(throws: StoreError.userExists("ann"), "\(spelling)") {
                    try store.createUser(named: spelling, passwordHash: nil, at: storeEpoch)
                }
            }
            // Only the cased key sees these two as the same.
            #expect(try store.user(named: "ll")?.name == "Il")
            #expect(throws: StoreError.userExists("Il")) { try store.createUser(named: "ll", passwordHash: nil, at: storeEpoch) }
            #expect(try store.user(named: "anne") == nil)
            #expect(try store.createUser(named: "anne", passwordHash: nil, at: storeEpoch).name == "anne")
            // Everything else takes the registered spelling.
            #expect(throws: StoreError.unknownUser("ANN")) { try store.setPasswordHash("h", forUser: "ANN") }
        }
    }

    @Test func namesStayUniqueAcrossARestartOfTheSQLiteStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            let store = try SQLiteMessageStore(path: path)
            _ = try store.createUser(named: "ann", passwordHash: "hash", at: storeEpoch)
            store.close()
            let reopened = try SQLiteMessageStore(path: path)
            defer { reopened.close() }
            #expect(try reopened.user(named: "ＡＮＮ") == UserRecord(name: "ann", passwordHash: "hash", roomStart: 0, created: storeEpoch))
            #expect(throws: StoreError.userExists("ann")) { try reopened.createUser(named: "ANN", passwordHash: nil, at: storeEpoch) }
        }
    }

    /// Version 1 of the file layout, as the previous release created it.
    static let schemaVersion1 = """
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
        PRAGMA application_id = 1229800275;
        PRAGMA user_version = 1;
        """

    /// A file of version 1 with users "ann" (oldest), "ANN" (the same name now), "bob" and a direct
    /// message from ann to bob.
    static func makeVersion1File(at path: String) throws {
        let database = try SQLiteDatabase(path: path)
        defer { database.close() }
        try database.execute(schemaVersion1)
        try database.execute(
            """
            INSERT INTO users VALUES ('ann', NULL, 0, 1000), ('ANN', 'hash', 0, 2000), ('bob', NULL, 0, 3000);
            INSERT INTO conversations (id, name, member_a, member_b, head) VALUES (1, 'direct:ann bob', 'ann', 'bob', 1);
            INSERT INTO messages VALUES (1, 1, 'ann', 'hi bob', 4000, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 1);
            """)
    }

    @Test func aVersion1FileIsMigratedWithTheKeysOfItsUsersAndCollidingUsersAreKept() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            try Self.makeVersion1File(at: path)
            let store = try SQLiteMessageStore(path: path)
            defer { store.close() }
            let rows = try store.withDatabase { database in
                try database.query("SELECT name, key_folded, key_cased FROM users ORDER BY created_ms") {
                    [$0.text(0), $0.text(1), $0.text(2)]
                }
            }
            #expect(rows == [["ann", "ann", "ann"], ["ANN", "ann", "ANN"], ["bob", "bob", "bob"]])
            #expect(try store.withDatabase { try $0.schemaVersion() } == 2)
            #expect(try store.withDatabase { try $0.text("SELECT value FROM settings WHERE name = 'name_keys'") } == UserName.keyVersion)
            // Both colliding users keep their rows and log in under their exact spelling; any other
            // spelling finds the oldest; no third one can be made.
            #expect(try store.user(named: "ann")?.name == "ann")
            #expect(
                try store.user(named: "ANN")
                    == UserRecord(
                        name: "ANN", passwordHash: "hash", roomStart: 0,
                        created: Date(millisecondsSince1970: 2000)))
            #expect(try store.user(named: "Ann")?.name == "ann")
            #expect(throws: StoreError.userExists("ann")) { try store.createUser(named: "aNN", passwordHash: nil, at: storeEpoch) }
            // Messages and conversations are untouched.
            #expect(try store.messages(in: .direct("ann", "bob"), after: 0, limit: 10).map(\.text) == ["hi bob"])
            #expect(try store.directConversations(of: "bob") == [.direct("ann", "bob")])
        }
    }

    /// Keys computed with other rules or another ICU (its confusables table changes between releases)
    /// are computed again when the store opens.
    @Test func keysOfAnotherICUAreComputedAgainWhenTheStoreOpens() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            let store = try SQLiteMessageStore(path: path)
            _ = try store.createUser(named: "ann", passwordHash: nil, at: storeEpoch)
            try store.withDatabase { database in
                try database.execute("UPDATE users SET key_folded = 'stale', key_cased = 'stale'; UPDATE settings SET value = '1 ICU 0.1'")
            }
            #expect(try store.user(named: "ANN") == nil)
            store.close()
            let reopened = try SQLiteMessageStore(path: path)
            defer { reopened.close() }
            #expect(try reopened.user(named: "ANN")?.name == "ann")
            #expect(try reopened.withDatabase { try $0.text("SELECT key_folded FROM users") } == "ann")
        }
    }
}
