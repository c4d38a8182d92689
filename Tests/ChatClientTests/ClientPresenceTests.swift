@testable import ChatClient
@testable import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

/// Issue 12 in the client: presence batches as compact lines, `/who` and `/who more`.
@Suite struct ClientPresenceTests {
    @Test func whoCommands() {
        #expect(ChatCommand.parse("/who") == .who(more: false))
        #expect(ChatCommand.parse(" /who  more ") == .who(more: true))
        #expect(ChatCommand.parse("/who bob") == .invalid(help: "usage: /who [more]"))
        #expect(ChatCommand.parse("/who more please") == .invalid(help: "usage: /who [more]"))
        #expect(ChatCommand.help.contains("/who [more]"))
    }

    @Test func presenceBatchLines() {
        let terminal = ChatLines(style: .terminal, me: "ann")
        let pipe = ChatLines(style: .pipe, me: "ann")
        let many = ["bob", "carl", "dan", "eve", "fay", "gus", "hal"]
        #expect(
            terminal.presenceChanges(online: ["ann"] + many, offline: ["zed"], onlineCount: 1234, unlisted: 205) == [
                "* bob, carl, dan, eve, fay and 2 others joined", "* zed left", "* 205 more joined or left; 1234 online"
            ])
        #expect(
            pipe.presenceChanges(online: ["ann"] + many, offline: ["zed"], onlineCount: 1234, unlisted: 205) == [
                "* joined: bob carl dan eve fay gus hal", "* left: zed", "* 205 more joined or left; 1234 online"
            ])
        #expect(
            terminal.presenceChanges(online: ["bob"], offline: ["carl", "dan"], onlineCount: 2, unlisted: 0)
                == ["* bob joined", "* carl and dan left"])
        #expect(
            terminal.presenceChanges(online: Array(many.prefix(6)), offline: [], onlineCount: 7, unlisted: 0)
                == ["* bob, carl, dan, eve, fay and 1 other joined"])
        // My own login, in the tick I logged in, is not news to me.
        #expect(terminal.presenceChanges(online: ["ann"], offline: [], onlineCount: 1, unlisted: 0) == [])
        #expect(pipe.presenceChanges(online: ["b\u{1B}[2J"], offline: [], onlineCount: 2, unlisted: 0) == ["* joined: b\\u{1B}[2J"])
    }

    @Test func whoPageLines() {
        let terminal = ChatLines(style: .terminal, me: "ann")
        let pipe = ChatLines(style: .pipe, me: "ann")
        #expect(
            terminal.onlineUsers(names: ["ann", "bob"], onlineCount: 150, more: true)
                == "* online (150): ann, bob; /who more for the next page")
        #expect(terminal.onlineUsers(names: ["zed"], onlineCount: 150, more: false) == "* online (150): zed")
        #expect(terminal.onlineUsers(names: [], onlineCount: 150, more: false) == "* online (150): nobody further")
        #expect(pipe.onlineUsers(names: ["ann", "bob"], onlineCount: 150, more: true) == "online 150 more: ann bob")
        #expect(pipe.onlineUsers(names: ["zed"], onlineCount: 150, more: false) == "online 150 end: zed")
        #expect(pipe.onlineUsers(names: [], onlineCount: 150, more: false) == "online 150 end:")
    }

    /// On a real server with its real presence ticker: the client asks for batches and shows them;
    /// `/who` pages through 101 users 100 at a time.
    @Test(.offThePool) func theClientShowsBatchesAndPagesThroughWho() async throws {
        let chat = try PresenceFixture(presenceInterval: ChatServer.defaultPresenceInterval)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("im-who-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = EventRecorder<String>()
        var configuration = ChatClient.Configuration(name: "ann", host: "127.0.0.1", port: chat.server.port)
        configuration.dataDirectory = directory.path
        let client = try ChatClient(
            configuration: configuration, group: chat.group, output: { output.record($0) },
            onFinish: { output.record("finished \($0)") })
        client.start()
        defer { client.stop() }
        _ = try await output.first { $0.hasPrefix("* logged in as ann") }
        let crowd = names(1...100).map { chat.v2($0, batches: false) }
        defer { withExtendedLifetime(crowd) {} }
        for peer in crowd { try await peer.acceptedLogin() }
        // Batches until all 100 are accounted for (ann's own login may share a tick with them and take
        // one of the 100 listed places, leaving one unlisted).
        var joined: [String] = [], unlisted = 0
        while joined.count + unlisted < 100 {
            let line = try await output.next(within: .seconds(30))
            if line.hasPrefix("* joined: ") {
                joined += line.dropFirst("* joined: ".count).split(separator: " ").map(String.init)
            } else {
                let words = line.split(separator: " ")
                #expect(words.count == 8 && line.hasSuffix(" more joined or left; 101 online"), "\(line)")
                unlisted += Int(words[1]) ?? 100
            }
        }
        #expect(Set(joined).isSubset(of: names(1...100)) && joined.count + unlisted == 100 && unlisted <= 1)
        let firstPage = "online 101 more: ann " + names(1...99).joined(separator: " ")
        client.handle(line: "/who")
        var line = try await output.next()
        #expect(line == firstPage, "so far: \(output.all); the server's log but logins: \(chat.log.all.filter { !$0.hasPrefix("login ") })")
        client.handle(line: "/who more")
        line = try await output.next()
        #expect(line == "online 101 end: u100")
        client.handle(line: "/who more")
        line = try await output.next()
        #expect(line == "* no more names; /who starts from the first")
        client.handle(line: "/who")
        line = try await output.next()
        #expect(line == firstPage)
    }
}
