import ChatClient
@testable import ChatProtocol
import ChatTestSupport
import Foundation
@testable import im_client
@testable import im_server
import Testing
import TestSupport

/// `im-client` in a pipe against a real `im-server`: every command of `--help` in both protocols,
/// the exit statuses (4 when something failed), `--timestamps`, and `--version` / `--help` of both
/// programs.
@Suite struct ClientPipeTests {
    typealias Files = ClientExecutableTests.Files

    /// A client of `server` as `name` (protocol 2, live only unless `files` gives a password).
    static func client(_ name: String, _ server: ChatServerProcess, files: Files? = nil, _ flags: [String] = []) throws -> ChildProcess {
        var arguments = [name, "--port", server.port] + flags
        if let files, !flags.contains("--protocol") {
            arguments += ["--data-dir", files.dataDirectory, "--password-file", files.passwordFile]
        }
        return try ChildProcess.startProduct("im-client", arguments)
    }

    /// `printf '/to nobody hi\n' | im-client ann`: the refusal, then status 4 (it was 0).
    @Test func aRefusedMessageEndsWithStatus4() async throws {
        let server = try await ChatServerProcess.start()
        defer { server.stop() }
        let files = try Files(password: "unused")
        let ann = try Self.client("ann", server, ["--data-dir", files.dataDirectory])
        defer { ann.stop() }
        ann.type("/to nobody hi")
        ann.closeInput()
        #expect(
            try await ann.lines.next(2) { $0.hasPrefix("!") || $0.hasPrefix("refused") } == [
                "! unknownRecipient for #1: no user named nobody has ever logged in", "refused #1"
            ])
        #expect(try await ann.exitStatus() == 4)
    }

    @Test func aCommandNotUnderstoodEndsWithStatus4AndEverythingElseIsSent() async throws {
        let server = try await ChatServerProcess.start()
        defer { server.stop() }
        let files = try Files(password: "unused")
        let ann = try Self.client("ann", server, ["--data-dir", files.dataDirectory])
        defer { ann.stop() }
        ann.type("/dance")
        ann.type("hello")
        ann.closeInput()
        #expect(
            try await ann.lines.next(3) { $0.hasPrefix("!") || $0.hasPrefix("accepted") || $0.hasPrefix("stored") } == [
                "! unknown command /dance; \(ChatCommand.help)", "accepted #1 broadcast: hello", "stored #1"
            ])
        #expect(try await ann.exitStatus() == 4)
    }

    /// Every command `--help` lists, with protocol 2 (stored: a password): each answered, status 0.
    @Test func everyCommandWorksWithProtocol2() async throws {
        let server = try await ChatServerProcess.start()
        defer { server.stop() }
        let files = try Files(password: "ann-password")
        let ann = try Self.client("ann", server, files: files)
        defer { ann.stop() }
        _ = try await ann.lines.first { $0.hasPrefix("* logged in as ann") }
        ann.type("/help")
        #expect(try await ann.lines.next() == ChatCommand.help)
        ann.type("/who")
        #expect(try await ann.lines.next() == "online 1 end: ann")
        ann.type("/who more")
        #expect(try await ann.lines.next() == "* no more names; /who starts from the first")
        ann.type("/to ann a note to self")
        _ = try await ann.lines.first { $0 == "stored #1" }
        #expect(try await ann.lines.next() == "ann (direct): a note to self")  // a message to oneself comes back
        ann.type("/history ann 5")
        let history = try await ann.lines.next(2)
        #expect(history[0] == "history direct:ann ann: 1 message")
        #expect(history[1].hasPrefix("history direct:ann ann #1 ") && history[1].hasSuffix(" ann: a note to self"))
        ann.type("/quit")
        #expect(try await ann.lines.first { $0.hasPrefix("* disconnected") } == "* disconnected (by user)")
        #expect(try await ann.exitStatus() == 0)
    }

    /// The same with protocol 1: /history and /who say why they cannot, and the session ends with 4.
    @Test func everyCommandWorksWithProtocol1OrSaysWhyNot() async throws {
        let server = try await ChatServerProcess.start()
        defer { server.stop() }
        let ann = try Self.client("ann", server, ["--protocol", "1"])
        defer { ann.stop() }
        #expect(try await ann.lines.next(2) == ["* connected to 127.0.0.1:\(server.port)", "* logged in as ann; online: nobody else"])
        ann.type("/help")
        #expect(try await ann.lines.next() == ChatCommand.help)
        ann.type("/who")
        #expect(try await ann.lines.next() == "! /who needs protocol version 2 (--protocol 2, the default)")
        ann.type("/history bob")
        #expect(try await ann.lines.next() == "! /history needs protocol version 2 (--protocol 2, the default)")
        ann.type("/to ann a note to self")
        #expect(try await ann.lines.next(2) == ["sent to ann: a note to self", "ann (direct): a note to self"])
        ann.type("/quit")
        #expect(try await ann.lines.next() == "* disconnected (by user)")
        #expect(try await ann.exitStatus() == 4)
    }

    /// `--timestamps`: each line after its UTC time, ISO 8601 to the millisecond.
    @Test func timestampsStartEveryLineInAPipe() async throws {
        let server = try await ChatServerProcess.start()
        defer { server.stop() }
        let before = Date()
        let ann = try Self.client("ann", server, ["--protocol", "1", "--timestamps"])
        defer { ann.stop() }
        let lines = try await ann.lines.next(2)
        let after = Date()
        let pattern = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z (.*)$/
        #expect(
            lines.compactMap { try? pattern.wholeMatch(in: $0)?.output.8 }.map(String.init)
                == ["* connected to 127.0.0.1:\(server.port)", "* logged in as ann; online: nobody else"])
        // Its time lies within the wait (to the millisecond).
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let stamp = try format.parse(String(lines[0].prefix(24)))
        #expect(stamp.timeIntervalSince(before) > -0.001 && after.timeIntervalSince(stamp) > -0.001)
        ann.closeInput()
        #expect(try await ann.exitStatus() == 0)
    }

    @Test func bothProgramsSayTheirVersion() async throws {
        for program in ["im-client", "im-server"] {
            let run = try ChildProcess.startProduct(program, ["--version"])
            defer { run.stop() }
            #expect(try await run.exitStatus() == 0)
            #expect(String(decoding: run.allOutput, as: UTF8.self) == "\(program) \(chatVersion)\n")
        }
        #expect(chatVersion == "0.12.0")
    }

    /// Every flag of each synopsis is explained in its help, which also lists --version and --help.
    @Test func everyFlagIsInTheHelp() async throws {
        let server = try ChildProcess.startProduct("im-server", ["--help"])
        defer { server.stop() }
        #expect(try await server.exitStatus() == 0)
        #expect(String(decoding: server.allOutput, as: UTF8.self) == ServerOptions.usage + "\n" + ServerOptions.help + "\n")
        for (usage, help) in [(ServerOptions.usage, ServerOptions.help), (ClientOptions.usage, ClientOptions.help)] {
            let flags = Set(usage.matches(of: /--[a-z-]+/).map { String($0.output) })
            #expect(flags.count >= 10)
            // A flag's explanation is a help line that starts with it (after the indentation).
            let explained = Set(
                help.split(separator: "\n").compactMap { line in
                    line.wholeMatch(of: /\s+(?:-h, )?(--[a-z-]+).*/).map { String($0.output.1) }
                })
            #expect(flags.subtracting(explained).isEmpty, "not explained: \(flags.subtracting(explained).sorted())")
            #expect(explained.isSuperset(of: ["--version", "--help"]))
        }
    }
}
