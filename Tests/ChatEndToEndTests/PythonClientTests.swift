import Foundation
import Testing
import TestSupport

/// `im-server` against a second, independent client of protocol version 2: Tests/Interop/chat_client_v2.py,
/// written in Python's standard library from docs/PROTOCOL.md alone. Every message numbered, stored,
/// delivered exactly once and in order, across a cut connection, a killed client and an offline receiver.
@Suite struct PythonClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/chat_client_v2.py").path

    /// Generous: two shared cores, a Python start-up per process and Argon2id per login.
    static let limit = Duration.seconds(60)

    /// An `im-server` on a free loopback port, keeping messages in memory; its port.
    static func startServer() async throws -> (ChildProcess, String) {
        let server = try ChildProcess.startProduct("im-server", ["--port", "0", "--no-discovery", "--store", ":memory:"])
        let listening = logText(try await server.lines.next(within: limit))
        #expect(listening.hasPrefix("im-server listening on 127.0.0.1:") && listening.hasSuffix(" (messages kept in memory only)"))
        let port = try #require(listening.split(separator: ":").last?.split(separator: " ").first.map(String.init))
        return (server, port)
    }

    /// `python3 chat_client_v2.py --port PORT --password pw --quiet arguments…` (quiet: no presence, receipt or
    /// duplicate lines).
    static func python(_ port: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess("/usr/bin/env", ["python3", script, "--port", port, "--password", "pw", "--quiet"] + arguments)
    }

    /// A scratch directory for the clients' state files, removed by `body`'s end.
    static func withStateDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("python-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// Runs a client to its end; returns its whole output, line by line, after checking its exit status.
    static func run(_ port: String, _ arguments: [String], status expected: Int32 = 0) async throws -> [String] {
        let client = try python(port, arguments)
        defer { client.stop() }
        let status = try await client.exitStatus(within: limit)
        let lines = client.lines.all
        #expect(status == expected, "\(arguments) exited \(status): \(lines)")
        return lines
    }

    static func stored(_ ids: ClosedRange<Int>) -> [String] { ids.map { "stored \($0) \($0)" } }

    static func deliveries(_ seqs: ClosedRange<Int>, from sender: String = "carl") -> [String] {
        seqs.map { "delivery direct:bob carl \($0) \(sender) message \($0)" }
    }

    @Test func fiftyDirectMessagesArriveExactlyOnceInOrder() async throws {
        let (server, port) = try await Self.startServer()
        defer { server.stop() }
        let bob = try Self.python(port, ["--name", "bob", "receive", "--count", "50"])
        defer { bob.stop() }
        #expect(try await bob.lines.next(within: Self.limit) == "logged in bob stored=true")
        let carl = try Self.python(port, ["--name", "carl", "send", "bob", "1..50"])
        defer { carl.stop() }

        // Ids 1…50 of carl's new client instance, numbered 1…50 in the new conversation, stored in id order.
        #expect(try await carl.lines.next(50, within: Self.limit) { $0.hasPrefix("stored ") } == Self.stored(1...50))
        #expect(try await carl.exitStatus(within: Self.limit) == 0)
        #expect(try await bob.lines.next(50, within: Self.limit) == Self.deliveries(1...50))
        #expect(try await bob.exitStatus(within: Self.limit) == 0)
        #expect(bob.lines.all.count == 51)
        // The sender's own client gets its messages too, as numbered deliveries of the conversation.
        #expect(carl.lines.all.filter { $0.hasPrefix("delivery ") } == Self.deliveries(1...50))
        #expect(!(carl.lines.all + bob.lines.all).contains { $0.hasPrefix("gap ") || $0.hasPrefix("error ") })
    }

    @Test func historyIsTheLastMessagesOfAConversationOfTheUser() async throws {
        let (server, port) = try await Self.startServer()
        defer { server.stop() }
        // bob logs in once, so that messages to him are kept.
        #expect(try await Self.run(port, ["--name", "bob", "receive", "--count", "0"]) == ["logged in bob stored=true"])
        let sent = try await Self.run(port, ["--name", "carl", "send", "bob", "1..5"])
        #expect(sent.filter { $0.hasPrefix("stored ") } == Self.stored(1...5))

        #expect(
            try await Self.run(port, ["--name", "bob", "history", "direct:bob carl", "3"]).filter { !$0.hasPrefix("delivery ") } == [
                "logged in bob stored=true",
                "message 3 carl message 3", "message 4 carl message 4", "message 5 carl message 5",
                "history 3"
            ])
        #expect(
            try await Self.run(port, ["--name", "carl", "history", "direct:bob carl", "100"]) == [
                "logged in carl stored=true",
                "message 1 carl message 1", "message 2 carl message 2", "message 3 carl message 3",
                "message 4 carl message 4", "message 5 carl message 5",
                "history 5"
            ])
        #expect(try await Self.run(port, ["--name", "carl", "history", "room", "10"]) == ["logged in carl stored=true", "history 0"])
        // Only a conversation of one's own; only with a password.
        #expect(
            try await Self.run(port, ["--name", "dave", "history", "direct:bob carl", "10"], status: 7) == [
                "logged in dave stored=true", "error badRequest direct:bob carl is not a conversation of dave"
            ])
        let live = try ChildProcess("/usr/bin/env", ["python3", Self.script, "--port", port, "--name", "eve", "history", "room", "10"])
        defer { live.stop() }
        #expect(try await live.exitStatus(within: Self.limit) == 7)
        #expect(
            live.lines.all == [
                "logged in eve stored=false", "error historyUnavailable history is kept only for names claimed with a password"
            ])
    }

    @Test func cutConnectionsLoseAndDuplicateNothing() async throws {
        let (server, port) = try await Self.startServer()
        defer { server.stop() }
        try await Self.withStateDirectory { directory in
            let bob = try Self.python(
                port,
                [
                    "--name", "bob", "--state", directory.appendingPathComponent("bob.json").path,
                    "--drop-after", "20", "receive", "--count", "50"
                ])
            defer { bob.stop() }
            #expect(try await bob.lines.next(within: Self.limit) == "logged in bob stored=true")
            // carl's connection is cut (RST) right after the 10th `stored`: the `stored` answers still on the
            // way are lost, so ids 11…50 are resent after the new login, and stored once.
            let carl = try Self.python(
                port,
                [
                    "--name", "carl", "--state", directory.appendingPathComponent("carl.json").path,
                    "--drop-after", "10", "send", "bob", "1..50"
                ])
            defer { carl.stop() }
            #expect(try await carl.exitStatus(within: Self.limit) == 0)
            let carlLines = carl.lines.all
            #expect(carlLines.filter { $0.hasPrefix("stored ") } == Self.stored(1...50))
            #expect(carlLines.filter { $0 == "dropped" }.count == 1)
            #expect(carlLines.filter { $0 == "logged in carl stored=true" }.count == 2)

            // bob's is cut right after the 20th delivery, before he acknowledges it.
            #expect(try await bob.exitStatus(within: Self.limit) == 0)
            let bobLines = bob.lines.all
            #expect(bobLines.filter { $0.hasPrefix("delivery ") } == Self.deliveries(1...50))
            #expect(bobLines.filter { $0 == "dropped" }.count == 1)
            #expect(bobLines.filter { $0 == "logged in bob stored=true" }.count == 2)
            #expect(!(carlLines + bobLines).contains { $0.hasPrefix("gap ") || $0.hasPrefix("error ") })

            // Stored once each: the conversation holds exactly 1…50.
            let history = try await Self.run(
                port,
                [
                    "--name", "bob", "--state", directory.appendingPathComponent("bob.json").path,
                    "history", "direct:bob carl", "100"
                ])
            #expect(history == ["logged in bob stored=true"] + (1...50).map { "message \($0) carl message \($0)" } + ["history 50"])
        }
    }

    @Test func anOfflineReceiverGetsEverythingAtLogin() async throws {
        let (server, port) = try await Self.startServer()
        defer { server.stop() }
        #expect(try await Self.run(port, ["--name", "bob", "receive", "--count", "0"]) == ["logged in bob stored=true"])
        let sent = try await Self.run(port, ["--name", "carl", "send", "bob", "1..50"])
        #expect(sent.filter { $0.hasPrefix("stored ") } == Self.stored(1...50))
        // A new client instance with no state: everything bob never acknowledged.
        #expect(
            try await Self.run(port, ["--name", "bob", "receive", "--count", "50"]) == ["logged in bob stored=true"]
                + Self.deliveries(1...50))
    }

    @Test func killedClientsResendAndDeduplicateFromTheirStateFiles() async throws {
        let (server, port) = try await Self.startServer()
        defer { server.stop() }
        try await Self.withStateDirectory { directory in
            let bobState = directory.appendingPathComponent("bob.json").path
            let carlState = directory.appendingPathComponent("carl.json").path
            #expect(
                try await Self.run(port, ["--name", "bob", "--state", bobState, "receive", "--count", "0"]) == ["logged in bob stored=true"]
            )
            // carl is killed (no goodbye) right after the 10th `stored`; the rest waits in his outbox on disk.
            let first = try await Self.run(
                port, ["--name", "carl", "--state", carlState, "--crash-after", "10", "send", "bob", "1..50"], status: 70)
            #expect(first.filter { $0.hasPrefix("stored ") } == Self.stored(1...10))
            let second = try await Self.run(port, ["--name", "carl", "--state", carlState, "resume"])
            #expect(second.filter { $0.hasPrefix("stored ") } == Self.stored(11...50))

            // bob is killed right after showing the 20th; started again, he shows only the rest.
            let shown = try await Self.run(
                port, ["--name", "bob", "--state", bobState, "--crash-after", "20", "receive", "--count", "50"], status: 70)
            #expect(shown == ["logged in bob stored=true"] + Self.deliveries(1...20))
            let rest = try await Self.run(port, ["--name", "bob", "--state", bobState, "receive", "--count", "30"])
            #expect(rest == ["logged in bob stored=true"] + Self.deliveries(21...50))
        }
    }
}
