import AsyncSocket
import ChatTestSupport
import Foundation
@testable import im_client
import Testing
import TestSupport

/// `im-client` itself, in a pipe, against the fake version 2 server: exit statuses, the password file,
/// the outbox kept across runs.
@Suite struct ClientExecutableTests {
    /// A temporary directory with a password file in it, removed afterwards.
    typealias Files = ClientFiles

    @Test func pipedInputEndsWithStatus0OnceEverythingIsStoredAndThePasswordIsNeverShown() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "client-executable")
        defer { group.shutdown() }
        let password = "correct horse battery staple"
        let server = try FakeChatServerV2(users: ["ann": password, "bob": "bob-password"], group: group)
        defer { server.stop() }
        let files = try Files(password: password)
        let ann = try ChildProcess.startProduct(
            "im-client",
            [
                "ann", "--port", "\(server.port)", "--data-dir", files.dataDirectory, "--password-file", files.passwordFile
            ])
        defer { ann.stop() }
        #expect(try await ann.lines.next(2) == ["* connected to 127.0.0.1:\(server.port)", "* logged in as ann; online: nobody else"])
        ann.type("/to bob hi")
        #expect(try await ann.lines.next(2) == ["accepted #1 to bob: hi", "stored #1"])
        ann.closeInput()
        #expect(try await ann.lines.next() == "* disconnected (by user)")
        #expect(try await ann.exitStatus() == 0)

        let login = try await server.logins.next()
        guard case .login(_, _, _, let instance, _, _) = login else {
            Issue.record("login was \(login)")
            return
        }
        #expect(
            login
                == .login(
                    name: "ann", password: password, resumeToken: nil, clientInstance: instance, positions: [:],
                    presenceChanges: true))
        #expect(instance.count == 32)
        #expect(!String(decoding: ann.allOutput, as: UTF8.self).contains("horse"))
        let mode = try FileManager.default.attributesOfItem(atPath: files.dataDirectory)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: files.dataDirectory).sorted().filter {
                !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            } == [
                "ann@127.0.0.1_\(server.port).lock", "ann@127.0.0.1_\(server.port).sent.sqlite", "ann@127.0.0.1_\(server.port).sqlite"
            ])
    }

    /// Nothing listens: after the input ends and `--wait` passes, status 1 and the outbox count; the
    /// next run, with a server there, sends them (same ids) and ends with status 0.
    @Test func pipedInputEndsWithStatus1AndTheOutboxCountWhenTheServerIsUnreachable() async throws {
        let port = ReservedLoopbackPort(sharedWithServer: true)
        defer { port.release() }
        let files = try Files(password: "ann-password")
        let arguments = [
            "ann", "--port", "\(port.port)", "--data-dir", files.dataDirectory, "--password-file", files.passwordFile,
            "--wait", "0.5"
        ]
        let first = try ChildProcess.startProduct("im-client", arguments)
        defer { first.stop() }
        first.type("/to bob one")
        first.type("/to bob two")
        first.closeInput()
        let said = try await first.lines.next(3) { $0.hasPrefix("accepted") || $0.hasPrefix("!") }
        #expect(
            said == [
                "accepted #1 to bob: one", "accepted #2 to bob: two",
                "! server unreachable for 0.5 s: 2 messages still in the outbox, kept for the next start"
            ])
        #expect(try await first.exitStatus() == 1)

        let group = EventLoopGroup(numberOfThreads: 1, name: "client-executable")
        defer { group.shutdown() }
        let server = try FakeChatServerV2(port: port.port, sharedPort: true, users: ["bob": "bob-password"], group: group)
        defer { server.stop() }
        port.release()
        let second = try ChildProcess.startProduct("im-client", arguments)
        defer { second.stop() }
        #expect(
            try await second.lines.next(5) == [
                "* 2 messages from an earlier run in the outbox; sent once logged in",
                "* connected to 127.0.0.1:\(port.port)", "* logged in as ann; online: nobody else",
                "stored #1", "stored #2"
            ])
        second.closeInput()
        #expect(try await second.lines.next() == "* disconnected (by user)")
        #expect(try await second.exitStatus() == 0)
        #expect(server.messages(in: "direct:ann bob").map(\.text) == ["one", "two"])
    }

    /// With `inputAlreadyOver` (`< /dev/null`), regression: the client left at once, status 0, before
    /// the login was even answered, so a wrong password went unnoticed by a script.
    @Test(arguments: [false, true])
    func aWrongPasswordEndsWithStatus2(inputAlreadyOver: Bool) async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "client-executable")
        defer { group.shutdown() }
        let server = try FakeChatServerV2(users: ["ann": "the real one"], group: group)
        defer { server.stop() }
        let files = try Files(password: "a guess")
        let ann = try ChildProcess.startProduct(
            "im-client",
            [
                "ann", "--port", "\(server.port)", "--data-dir", files.dataDirectory, "--password-file", files.passwordFile
            ])
        defer { ann.stop() }
        if inputAlreadyOver { ann.closeInput() }
        #expect(
            try await ann.lines.next(3) == [
                "* connected to 127.0.0.1:\(server.port)", "! badPassword: wrong password for ann", "* disconnected (login refused)"
            ])
        #expect(try await ann.exitStatus() == 2)
    }

    @Test func helpListsTheFlagsAndTheLines() async throws {
        let help = try ChildProcess.startProduct("im-client", ["--help"])
        defer { help.stop() }
        #expect(try await help.exitStatus() == 0)
        #expect(String(decoding: help.allOutput, as: UTF8.self) == ClientOptions.help + "\n")
    }
}
