import AsyncSocket
@testable import ChatClient
@testable import ChatCommandLine
@testable import ChatProtocol
import ChatTestSupport
import Foundation
import Glibc
@testable import im_client
import Testing
import TestSupport

/// The client's pieces without a network: commands, flags, passwords, files, the sent-message log,
/// the lines.
@Suite struct ClientPartsTests {
    @Test func historyAndHelpCommands() {
        #expect(ChatCommand.parse("/history") == .history(with: nil, limit: 20))
        #expect(ChatCommand.parse("/history 5") == .history(with: nil, limit: 5))
        #expect(ChatCommand.parse("/history bob") == .history(with: "bob", limit: 20))
        #expect(ChatCommand.parse("/history  bob  100 ") == .history(with: "bob", limit: 100))
        #expect(ChatCommand.parse("/history 7 3") == .history(with: "7", limit: 3))
        let usage = "usage: /history [NAME] [N] (N from 1 to 100, default 20)"
        for line in ["/history 0", "/history 101", "/history bob many", "/history a b c"] {
            #expect(ChatCommand.parse(line) == .invalid(help: usage))
        }
        #expect(ChatCommand.parse("/help") == .listCommands)
        #expect(ChatCommand.parse("/help me") == .invalid(help: "unknown command /help; \(ChatCommand.help)"))
    }

    @Test func clientFlagsForVersion2() throws {
        let defaults = try ClientOptions(arguments: ["ann"])
        #expect(defaults.protocolVersion == .v2)
        #expect(defaults.passwordFile == nil)
        #expect(defaults.dataDirectory == nil)
        #expect(defaults.wait == .seconds(30))
        let set = try ClientOptions(arguments: ["ann", "--password-file", "/p", "--data-dir=/d", "--wait", "0.25"])
        #expect(set.passwordFile == "/p")
        #expect(set.dataDirectory == "/d")
        #expect(set.wait == .milliseconds(250))
        #expect(try ClientOptions(arguments: ["ann", "--protocol", "1"]).protocolVersion == .v1)
        #expect(throws: UsageError(description: "--protocol: 1 or 2, not 3\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--protocol", "3"])
        }
        #expect(throws: UsageError(description: "--password-file needs --protocol 2\n\(ClientOptions.usage)")) {
            try ClientOptions(arguments: ["ann", "--protocol", "1", "--password-file", "/p"])
        }
        let configuration = set.configuration(host: "::1", port: 9, password: "pw", style: .terminal)
        #expect(configuration.name == "ann" && configuration.host == "::1" && configuration.port == 9)
        #expect(configuration.password == "pw" && configuration.dataDirectory == "/d" && configuration.style == .terminal)
        #expect(configuration.wait == .milliseconds(250) && configuration.protocolVersion == .v2)
        #expect(configuration.reconnectPolicy == .keepTrying(cap: .seconds(60)))
        // Not a terminal, no file: no password (live only); version 1: never one.
        #expect(try defaults.password(interactive: false) == nil)
        #expect(try ClientOptions(arguments: ["ann", "--protocol", "1"]).password(interactive: true) == nil)
    }

    @Test func thePasswordIsTheFirstLineOfItsFileAndErrorsNeverShowIt() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("password").path
            for (content, password) in [("s3cret pass\n", "s3cret pass"), ("s3cret\r\nsecond\n", "s3cret"), ("no newline", "no newline")] {
                try Data(content.utf8).write(to: URL(fileURLWithPath: file))
                #expect(try PasswordInput.read(file: file) == password)
            }
            try Data("\nhidden\n".utf8).write(to: URL(fileURLWithPath: file))
            #expect(throws: PasswordError.empty(path: file)) { try PasswordInput.read(file: file) }
            let long = String(repeating: "x", count: 1_025)
            try Data(long.utf8).write(to: URL(fileURLWithPath: file))
            #expect(throws: PasswordError.tooLong(path: file, bytes: 1_025)) { try PasswordInput.read(file: file) }
            #expect(!"\(PasswordError.tooLong(path: file, bytes: 1_025))".contains("xxx"))
            let missing = directory.appendingPathComponent("missing").path
            let error = #expect(throws: PasswordError.self) { try PasswordInput.read(file: missing) }
            guard case .unreadable(missing, _)? = error else {
                Issue.record("got \(String(describing: error))")
                return
            }
        }
    }

    /// The prompt on a pseudo-terminal: what is typed is read, and not echoed.
    /// Regression: this test read the terminal on a thread of Swift's cooperative pool while the prompt
    /// ran as a task on it: with 2 threads in the pool, a busy neighbour stalled every test of the suite
    /// for seconds (found with TestSupport's StallWatchdog). Both now run on threads of their own.
    @Test func thePromptDoesNotEcho() async throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        #expect(openpty(&master, &slave, nil, nil, nil) == 0)
        defer {
            close(master)
            close(slave)
        }
        let (terminal, side) = (slave, master)
        let (answer, shown, echoRestored) = await runOnAThread { () -> (String?, String, Bool) in
            let typed = LockedValue<String?>(nil)
            let prompted = DispatchSemaphore(value: 0)
            Thread {
                typed.withLock { $0 = try? PasswordInput.prompt("password: ", input: terminal, output: terminal) }
                prompted.signal()
            }.start()
            // Echo is off before the prompt is written: type once it shows.
            var shown = ""
            var buffer = [UInt8](repeating: 0, count: 256)
            while !shown.contains("password: ") {
                let count = read(side, &buffer, buffer.count)
                guard count > 0 else { break }
                shown += String(decoding: buffer[..<count], as: UTF8.self)
            }
            _ = "hunter2\n".withCString { write(side, $0, 8) }
            guard prompted.wait(timeout: .now() + 10) == .success else { return (nil, shown, false) }
            var echo = termios()
            let restored = tcgetattr(terminal, &echo) == 0 && echo.c_lflag & tcflag_t(ECHO) != 0
            // What the terminal showed after the prompt: the newline the prompt wrote, not the password.
            _ = fcntl(side, F_SETFL, fcntl(side, F_GETFL) | O_NONBLOCK)
            let count = read(side, &buffer, buffer.count)
            shown += count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
            return (typed.withLock { $0 }, shown, restored)
        }
        #expect(answer == "hunter2")
        #expect(echoRestored)
        #expect(shown == "password: \r\n")
    }

    @Test func stateFilesAreNamedAfterUserAndServerAndLocked() throws {
        #expect(ChatClientState.fileStem(name: "ann", host: "127.0.0.1", port: 7777) == "ann@127.0.0.1_7777")
        #expect(ChatClientState.fileStem(name: ".a/b é", host: "::1", port: 1) == "%2Ea%2Fb%20%C3%A9@%3A%3A1_1")
        #expect(ChatClientState.defaultDirectory(environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/im-client")
        #expect(ChatClientState.defaultDirectory(environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"]) == "/h/.local/share/im-client")
        #expect(ChatClientState.defaultDirectory(environment: [:]) == nil)
        try withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("a/b").path
            let state = try ChatClientState(directory: data, name: "ann", host: "127.0.0.1", port: 7777)
            let mode = try FileManager.default.attributesOfItem(atPath: data)[.posixPermissions] as? Int
            #expect(mode == 0o700)
            #expect(throws: ChatClientStateError.inUse(path: "\(data)/ann@127.0.0.1_7777.lock")) {
                _ = try ChatClientState(directory: data, name: "ann", host: "127.0.0.1", port: 7777)
            }
            let other = try ChatClientState(directory: data, name: "bob", host: "127.0.0.1", port: 7777)
            other.close()
            let instance = state.deliveryStore.clientInstance
            state.close()
            let again = try ChatClientState(directory: data, name: "ann", host: "127.0.0.1", port: 7777)
            defer { again.close() }
            #expect(again.deliveryStore.clientInstance == instance)
        }
    }

    @Test func theSentLogMapsReceiptsToIdsOnceAcrossAReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("sent.sqlite").path
            let log = try SentMessageLog(path: path)
            try log.record(id: 17, conversation: "direct:ann bob", sequence: 5)
            try log.record(id: 18, conversation: "direct:ann bob", sequence: 7)
            try log.record(id: 19, conversation: "room", sequence: 3)
            #expect(try log.id(conversation: "direct:ann bob", sequence: 5) == 17)
            #expect(try log.id(conversation: "direct:ann bob", sequence: 6) == nil)
            #expect(try log.receipt(conversation: "direct:ann bob", upTo: 6) == [17])
            #expect(try log.receipt(conversation: "direct:ann bob", upTo: 6) == [])
            log.close()
            let reopened = try SentMessageLog(path: path)
            defer { reopened.close() }
            #expect(try reopened.receipt(conversation: "direct:ann bob", upTo: 5) == [])
            #expect(try reopened.receipt(conversation: "direct:ann bob", upTo: 9) == [18])
            #expect(try reopened.id(conversation: "room", sequence: 3) == 19)
        }
    }

    @Test func theSentLogKeepsItsCapacity() throws {
        try withTemporaryDirectory { directory in
            let log = try SentMessageLog(path: directory.appendingPathComponent("sent.sqlite").path, capacity: 10)
            defer { log.close() }
            for id: UInt64 in 1...100 { try log.record(id: id, conversation: "room", sequence: id) }
            #expect(try log.count() == 10)  // trimmed at the 100th record
            #expect(try log.id(conversation: "room", sequence: 91) == 91)
            #expect(try log.id(conversation: "room", sequence: 90) == nil)
        }
    }

    @Test func linesForATerminalAndForAPipe() {
        let terminal = ChatLines(style: .terminal, me: "ann")
        let pipe = ChatLines(style: .pipe, me: "ann")
        let direct = ChatMessage.v2(.directMessage(id: 17, to: "bob", text: "hi"))
        #expect(terminal.accepted(id: 17, direct) == "#17 → bob: hi")
        #expect(pipe.accepted(id: 17, direct) == "accepted #17 to bob: hi")
        #expect(terminal.accepted(id: 18, .broadcast(text: "all\u{1B}[2J")) == "#18 → everyone: all\\u{1B}[2J")
        #expect(pipe.accepted(id: 18, .broadcast(text: "all")) == "accepted #18 broadcast: all")
        #expect(terminal.stored(id: 17, live: false) == "✓ #17 stored")
        #expect(terminal.stored(id: 17, live: true) == "✓ #17 passed on (live only)")
        #expect(pipe.stored(id: 17, live: false) == "stored #17")
        #expect(pipe.stored(id: 17, live: true) == "passed #17")
        #expect(terminal.receipt(id: 17, by: "bob") == "✓✓ #17 received by bob")
        #expect(pipe.receipt(id: 17, by: "bob") == "received #17 by bob")
        #expect(terminal.refused(id: 17) == "✗ #17 refused")
        #expect(pipe.refused(id: 17) == "refused #17")
        #expect(pipe.delivery(from: "bob", text: "hi", isDirect: true, conversation: "direct:ann bob") == "bob (direct): hi")
        #expect(pipe.delivery(from: "bob", text: "hi", isDirect: false, conversation: "room") == "bob: hi")
        #expect(pipe.delivery(from: "ann", text: "me", isDirect: true, conversation: "direct:ann ann") == "ann (direct): me")
        #expect(pipe.delivery(from: "ann", text: "hi", isDirect: true, conversation: "direct:ann bob") == "you to bob: hi")
        #expect(pipe.delivery(from: "ann", text: "hi", isDirect: false, conversation: "room") == "you broadcast: hi")
        #expect(
            terminal.delivery(from: "ann", text: "hi", isDirect: true, conversation: "direct:ann bob") == "you (another device) → bob: hi")
        #expect(terminal.delivery(from: "ann", text: "hi", isDirect: false, conversation: "room") == "you (another device): hi")
        #expect(pipe.error(code: .unknownRecipient, detail: "no zed", id: 17) == "! unknownRecipient for #17: no zed")
        #expect(pipe.error(code: .badPassword, detail: "no", id: nil) == "! badPassword: no")
        let history = [ChatHistoryEntry(sequence: 5, from: "bob", text: "hi", time: Date(timeIntervalSince1970: 1_700_000_000.123))]
        #expect(
            pipe.history(conversation: "direct:ann bob", messages: history) == [
                "history direct:ann bob: 1 message", "history direct:ann bob #5 1700000000123 bob: hi"
            ])
        let shown = terminal.history(conversation: "direct:ann bob", messages: history)
        #expect(shown.first == "* history with bob, 1 message:")
        #expect(shown.count == 2 && shown[1].hasPrefix("  #5 2023-11-1") && shown[1].hasSuffix(" bob: hi"))
        #expect(terminal.history(conversation: "room", messages: []) == ["* history of the room, 0 messages"])
        #expect(
            pipe.reconnecting("reconnect attempt 4 in 8.5 s", delay: .milliseconds(8500), now: Date()) == "* reconnect attempt 4 in 8.5 s")
        let at = terminal.reconnecting("reconnect attempt 4 in 8.5 s", delay: .milliseconds(8500), now: Date(timeIntervalSince1970: 0))
        #expect(at == "* reconnect attempt 4 in 8.5 s (at \(ChatLines.localTime(Date(timeIntervalSince1970: 8.5), withDate: false)))")
    }
}
