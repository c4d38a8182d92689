@testable import ChatProtocol
@testable import ChatSQLite
@testable import ChatServer
import ChatTestSupport
import Foundation
import Testing
import TestSupport

/// The name rules at the real server (docs/PROTOCOL.md "Names"), over loopback: issue 12's look-alikes
/// of "ann" and blank names are refused in both protocol versions, with or without a password, before
/// and after a restart; a direct message to a look-alike reaches the registered user.
@Suite(.offThePool) struct NameLoginTests {
    /// The refusals of logins next to a user "ann": code and detail.
    static let refusals: [(String, ChatErrorCode, String)] = [
        ("ANN", .nameTaken, "ANN is too similar to the existing user ann"),
        ("Ann", .nameTaken, "Ann is too similar to the existing user ann"),
        ("\u{0430}nn", .invalidName, "a name cannot mix Cyrillic and Latin letters"),
        (
            "ａｎｎ", .invalidName,
            "a name cannot contain U+FF41 FULLWIDTH LATIN SMALL LETTER A: only letters, marks and digits of scripts in common use, _ and ' - . : ·"
        ),
        ("\u{3164}", .invalidName, "a name cannot contain invisible characters (U+3164 HANGUL FILLER)"),
        ("\u{2800}", .invalidName, "a name cannot contain characters that look blank (U+2800 BRAILLE PATTERN BLANK)"),
        ("\u{115F}", .invalidName, "a name cannot contain invisible characters (U+115F HANGUL CHOSEONG FILLER)"),
        ("ann\u{200B}", .invalidName, "a name cannot contain invisible characters (U+200B ZERO WIDTH SPACE)"),
        ("a" + String(repeating: "\u{301}", count: 500), .invalidName, "a name is at most 64 bytes of UTF-8, not 1001"),
        (String(repeating: "n", count: 33), .invalidName, "a name is at most 32 characters, not 33")
    ]

    /// The answer to a version 1 login as `name` on `peer` (not logged in).
    func v1Answer(_ peer: V1Peer, _ name: String) async throws -> ChatMessage {
        peer.link.send(.login(name: name, resumeToken: nil))
        return try await peer.received.next()
    }

    @Test func lookAlikesAndBlankNamesAreRefusedInBothVersions() async throws {
        let chat = try V2Fixture()
        let ann = chat.peer()
        #expect(accepted("ann")(try await ann.loggedIn("ann", password: "ann's secret")))
        let v1 = V1Peer(port: chat.server.port, group: chat.group)
        let live = chat.peer(), claiming = chat.peer()
        for (name, code, detail) in Self.refusals {
            #expect(try await v1Answer(v1, name) == .error(code: code, detail: detail), "v1 \(name)")
            #expect(
                try await live.loggedIn(name, password: nil) == .error(code: code, detail: detail, id: nil, retryAfter: nil), "v2 \(name)")
            #expect(
                try await claiming.loggedIn(name, password: "x") == .error(code: code, detail: detail, id: nil, retryAfter: nil),
                "v2 with a password \(name)")
        }
        // Good names still log in, in both versions.
        guard case .loginAccepted("José", _, _, _) = try await v1Answer(v1, "José") else { Issue.record("José refused"); return }
        #expect(accepted("小明", online: ["José", "ann"], stored: false)(try await live.loggedIn("小明", password: nil)))
        #expect(chat.server.onlineUsers == ["José", "ann", "小明"])
    }

    @Test func aLookAlikeOfAUserIsRefusedAfterARestartOfTheSQLiteStore() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            do {
                let chat = try V2Fixture(store: try SQLiteMessageStore(path: path))
                #expect(accepted("ann")(try await chat.peer().loggedIn("ann", password: "secret")))
                let bob = V1Peer(port: chat.server.port, group: chat.group)
                guard case .loginAccepted = try await v1Answer(bob, "bob") else { Issue.record("bob refused"); return }
            }
            let chat = try V2Fixture(store: try SQLiteMessageStore(path: path))
            let v1 = V1Peer(port: chat.server.port, group: chat.group)
            #expect(try await v1Answer(v1, "ANN") == .error(code: .nameTaken, detail: "ANN is too similar to the existing user ann"))
            #expect(
                try await v1Answer(v1, "ＢＯＢ")
                    == .error(
                        code: .invalidName,
                        detail:
                            "a name cannot contain U+FF22 FULLWIDTH LATIN CAPITAL LETTER B: only letters, marks and digits of scripts in common use, _ and ' - . : ·"
                    ))
            let v2 = chat.peer()
            #expect(
                try await v2.loggedIn("BOB", password: nil)
                    == .error(
                        code: .nameTaken, detail: "BOB is too similar to the existing user bob",
                        id: nil, retryAfter: nil))
            #expect(
                try await v2.loggedIn("Ann", password: "secret")
                    == .error(
                        code: .nameTaken, detail: "Ann is too similar to the existing user ann",
                        id: nil, retryAfter: nil))
            #expect(accepted("ann")(try await v2.loggedIn("ann", password: "secret")))
        }
    }

    /// `/to ANN`: the message goes to ann, in the conversation of the registered names, in both versions.
    @Test func aDirectMessageToALookAlikeReachesTheRegisteredUser() async throws {
        let chat = try V2Fixture()
        let ann = chat.peer(), bob = chat.peer()
        _ = try await ann.loggedIn("ann", password: "a")
        _ = try await bob.loggedIn("bob", password: "b")
        bob.send(.directMessage(id: 1, to: "ANN", text: "hi"))
        #expect(
            try await bob.received.first { if case .v2(.stored) = $0 { true } else { false } }
                == .v2(.stored(id: 1, conversation: "direct:ann bob", sequence: 1)))
        #expect(
            try await ann.received.first { if case .v2(.delivery) = $0 { true } else { false } }
                == .v2(delivery("bob", "hi", "direct:ann bob", 1)))
        let cy = V1Peer(port: chat.server.port, group: chat.group)
        guard case .loginAccepted = try await v1Answer(cy, "cy") else { Issue.record("cy refused"); return }
        cy.link.send(.directMessage(to: "Ann", text: "yo"))
        #expect(
            try await ann.received.first { if case .v2(.delivery) = $0 { true } else { false } }
                == .v2(delivery("cy", "yo", "direct:ann cy", 1)))
        cy.link.send(.directMessage(to: "anne", text: "?"))
        #expect(
            try await cy.received.first { if case .error = $0 { true } else { false } }
                == .error(code: .unknownRecipient, detail: "no user named anne has ever logged in"))
    }

    /// A store from before the name rules may hold two users with the same key ("ann" and "ANN"): each
    /// logs in under its exact spelling, but not while the other is online.
    @Test func twoOldUsersWithTheSameKeyAreNeverOnlineTogether() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("chat.sqlite").path
            let database = try SQLiteDatabase(path: path)
            try database.execute(NameStoreTests.schemaVersion1)
            try database.execute("INSERT INTO users VALUES ('ann', NULL, 0, 1000), ('ANN', NULL, 0, 2000)")
            database.close()
            let chat = try V2Fixture(store: try SQLiteMessageStore(path: path))
            let ann = V1Peer(port: chat.server.port, group: chat.group)
            guard case .loginAccepted = try await v1Answer(ann, "ann") else { Issue.record("ann refused"); return }
            let other = V1Peer(port: chat.server.port, group: chat.group)
            #expect(try await v1Answer(other, "ANN") == .error(code: .nameTaken, detail: "ANN is too similar to ann, who is logged in"))
            ann.link.disconnect()
            _ = try await chat.log.first { $0.hasPrefix("logout ann") }
            guard case .loginAccepted("ANN", _, _, _) = try await v1Answer(other, "ANN") else { Issue.record("ANN refused"); return }
            let again = V1Peer(port: chat.server.port, group: chat.group)
            #expect(try await v1Answer(again, "ann") == .error(code: .nameTaken, detail: "ann is too similar to ANN, who is logged in"))
        }
    }
}
