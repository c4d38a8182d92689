import AsyncSocket
import ChatProtocol
import ChatTestSupport
import Foundation
import Glibc
import Testing
import TestSupport

/// The web client loses nothing (issue 34 §2, §3): its outbox is in IndexedDB, so what a browser sent is
/// stored once, in order, whether the server is killed (`kill -9`, an `im-server` child process on a
/// SQLite store, restarted on the same ports), or the tab is closed or crashes before the server could
/// take it; a server down for good is reported unavailable after im-client's three attempts.
@Suite(
    .cpuBound(minutes: 2),
    .enabled(if: ChromiumDriver.isInstalled, "Debian's chromium is not installed (scripts/setup.sh installs it)"))
struct ChatBrowserOutageTests {
    /// `im-server` on `port` and `webPort` with its store in `directory`; returns once its web port is up.
    /// Two loopback ports free now, for a server's chat and web ports, restarted on the same ones.
    static func twoFreePorts() -> (UInt16, UInt16) {
        let reserved = (ReservedLoopbackPort(), ReservedLoopbackPort())
        defer {
            reserved.0.release()
            reserved.1.release()
        }
        return (reserved.0.port, reserved.1.port)
    }

    static func startServer(port: UInt16, webPort: UInt16, directory: String) async throws -> ChildProcess {
        let server = try ChildProcess.startProduct(
            "im-server",
            [
                "--port", "\(port)", "--web-port", "\(webPort)", "--no-discovery", "--store", "\(directory)/chat.sqlite",
                "--idle-timeout", "600"
            ])
        _ = try await server.lines.first(within: .seconds(20)) { $0.contains("im-server web port on") }
        return server
    }

    /// SIGKILL, and reaped.
    static func kill9(_ server: ChildProcess) async throws {
        kill(server.pid, SIGKILL)
        _ = try await server.exitStatus(within: .seconds(10))
    }

    /// bob's 300-odd direct messages from ann, read as a new client of bob's would: logged in with his
    /// password and no positions, acknowledging as it goes (the server sends 256 unacknowledged at most).
    static func directMessages(to name: String, port: UInt16, count: Int, group: EventLoopGroup) async throws -> [ChatMessage] {
        let peer = V2Peer(port: port, group: group)
        defer { peer.link.disconnect() }
        _ = try await peer.loggedIn(name, password: "\(name)'s secret")
        var deliveries: [ChatMessage] = []
        while deliveries.count < count {
            let next = try await peer.received.first { if case .v2(.delivery) = $0 { true } else { false } }
            deliveries.append(next)
            if case .v2(.delivery(_, _, _, let conversation, let sequence?, _)) = next, deliveries.count % 100 == 0 {
                peer.send(.received(conversation: conversation, upTo: sequence))
            }
        }
        // Nothing after them (a `who` is answered after everything sent before it).
        peer.send(.who(after: nil, limit: 100))
        let rest = try await peer.received.first { if case .v2(.onlineUsers) = $0 { true } else { false } }
        #expect(rest == .v2(.onlineUsers(names: ["ann", name], onlineCount: 2, more: false)))
        #expect(!peer.received.pending.contains { if case .v2(.delivery) = $0 { true } else { false } })
        return deliveries
    }

    static func delivery(_ text: String, _ sequence: UInt64) -> ChatMessage {
        .v2(
            .delivery(
                from: "ann", text: text, isDirect: true, conversation: "direct:ann bob", sequence: sequence,
                time: .init(timeIntervalSince1970: 0)))
    }

    @Test func aServerKilledWhileABrowserSends300MessagesATabClosedAndATabCrashedLoseNothingAndShowNothingTwice() async throws {
        try await withTemporaryDirectory { directory in try await killAndClose(directory: directory) }
    }

    func killAndClose(directory: URL) async throws {
        let (port, webPort) = Self.twoFreePorts()
        var server = try await Self.startServer(port: port, webPort: webPort, directory: directory.path)
        defer { server.stop() }
        let group = EventLoopGroup(numberOfThreads: 1, name: "outage-test")
        defer { group.shutdown() }
        // bob has logged in once, so messages to him are kept while he is away.
        let bob = V2Peer(port: port, group: group)
        _ = try await bob.loggedIn("bob", password: "bob's secret")
        bob.link.disconnect()

        let browser = try ChromiumSession()
        do {
            let url = "http://127.0.0.1:\(webPort)/"
            let context = try await browser.newContext()
            let ann = try await ChatPage.open(browser, tab: "ann", url: url, context: context)
            try await ann.logIn("ann", password: "ann's secret")
            let texts = (1...300).map { String(format: "message %03d", $0) }

            // 100 sent; once 50 are stored the server is killed; the other 200 are typed while it is down.
            try await ann.sendAll(texts.prefix(100).map { "/to bob \($0)" })
            try await ann.openConversation("direct:ann bob")
            try await browser.wait("ann", until: "document.querySelectorAll('#messages .message[data-state=stored]').length >= 50")
            try await Self.kill9(server)
            try await browser.wait(
                "ann", until: "['reconnecting', 'unavailable'].includes(document.getElementById('status').dataset.state)")
            try await ann.sendAll(texts.dropFirst(100).map { "/to bob \($0)" })
            try await browser.wait("ann", until: "document.querySelectorAll('#messages .message').length === 300")
            let waiting = try await ann.waiting()
            #expect(waiting >= 200 && waiting <= 250, "the outbox while the server is down")
            try await ann.keepScreenshot("chat-reconnecting")

            // Restarted on the same ports and store: the outbox is sent again with its ids, stored once.
            server = try await Self.startServer(port: port, webPort: webPort, directory: directory.path)
            try await ann.waitForStatus("online", within: .seconds(30))
            try await browser.wait("ann", until: "document.getElementById('status').dataset.waiting === '0'", within: .seconds(60))
            let shown = try await ann.messages()
            #expect(shown.map(\.text) == texts)
            #expect(shown.map(\.seq) == Array(1...300))
            #expect(shown.allSatisfy { $0.from == "ann" && $0.state == "stored" })
            #expect(
                try await Self.directMessages(to: "bob", port: port, count: 300, group: group)
                    == texts.enumerated().map {
                        Self.delivery($1, UInt64($0 + 1))
                    })

            // Three more typed while the server is down, then the tab is closed: its outbox is what a new
            // tab sends once ann logs in there.
            try await Self.kill9(server)
            try await browser.wait("ann", until: "document.getElementById('status').dataset.state !== 'online'")
            try await ann.sendAll(["after 1", "after 2", "after 3"].map { "/to bob \($0)" })
            try await browser.wait("ann", until: "document.getElementById('status').dataset.waiting === '3'")
            try await browser.close(tab: "ann")
            server = try await Self.startServer(port: port, webPort: webPort, directory: directory.path)
            let again = try await ChatPage.open(browser, tab: "ann again", url: url, context: context)
            try await again.logIn("ann", password: "ann's secret")
            try await browser.wait("ann again", until: "document.getElementById('status').dataset.waiting === '0'", within: .seconds(30))
            try await again.openConversation("direct:ann bob")
            try await again.waitForMessage(from: "ann", "after 3", state: "stored")
            let after = try await again.messages()
            #expect(after.count == 303)
            #expect(after.suffix(3).map(\.text) == ["after 1", "after 2", "after 3"])
            #expect(after.suffix(3).map(\.seq) == [301, 302, 303])
            #expect(try await browser.consoleErrors("ann again") == [])

            // Two more while the server is down, then the tab crashes: reloaded, it logs in again by itself
            // (the tab's session storage) and sends them.
            try await Self.kill9(server)
            try await browser.wait("ann again", until: "document.getElementById('status').dataset.state !== 'online'")
            try await again.sendAll(["crash 1", "crash 2"])
            try await browser.wait("ann again", until: "document.getElementById('status').dataset.waiting === '2'")
            try await browser.crash("ann again")
            server = try await Self.startServer(port: port, webPort: webPort, directory: directory.path)
            try await browser.reload("ann again")
            try await again.waitForStatus("online", within: .seconds(30))
            try await browser.wait("ann again", until: "document.getElementById('status').dataset.waiting === '0'", within: .seconds(30))
            try await again.openConversation("direct:ann bob")
            try await again.waitForMessage(from: "ann", "crash 2", state: "stored")
            #expect(try await again.messages().suffix(3).map(\.text) == ["after 3", "crash 1", "crash 2"])
            #expect(try await again.messages().suffix(3).map(\.seq) == [303, 304, 305])

            // Down for good: three attempts (after 0–1, 2–3 and 4–5 s), then "server unavailable".
            try await Self.kill9(server)
            try await again.waitForStatus("reconnecting")
            try await again.waitForStatus("unavailable", within: .seconds(20))
            let text = try await browser.evaluate("ann again", "document.getElementById('status').textContent", as: String.self)
            #expect(text?.hasPrefix("server unavailable") == true, "\(text ?? "")")
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test func aServerThatStopsAnsweringIsLeftAfterOneUnansweredHeartbeatRejoinedWhenItAnswersAgainAndHeardGoingAway() async throws {
        try await withTemporaryDirectory { directory in
            let (port, webPort) = Self.twoFreePorts()
            let server = try await Self.startServer(port: port, webPort: webPort, directory: directory.path)
            defer {
                kill(server.pid, SIGCONT)
                server.stop()
            }
            let browser = try ChromiumSession()
            do {
                // Heartbeats every second; the server stopped (SIGSTOP): its connections stay open, nothing answers.
                let ann = try await ChatPage.open(
                    browser, tab: "ann", url: "http://127.0.0.1:\(webPort)/?heartbeat=1", context: try await browser.newContext())
                try await ann.logIn("ann", password: "ann's secret")
                kill(server.pid, SIGSTOP)
                try await browser.wait(
                    "ann", until: "document.getElementById('notice').textContent === 'disconnected (heartbeat unanswered)'")
                #expect(try await browser.evaluate("ann", "document.getElementById('status').dataset.state", as: String.self) != "online")
                try await ann.send("while the server was stopped")
                kill(server.pid, SIGCONT)
                try await ann.waitForStatus("online", within: .seconds(30))
                try await ann.waitForMessage(from: "ann", "while the server was stopped", state: "stored")
                // Shut down gracefully (SIGTERM): the page is told, and reconnects at once. Told is bob, in a
                // tab with the default heartbeat: ann's, beating every second, may be between connections on
                // a loaded machine, and hears nothing then. The notice is transient (a reconnect that gets in
                // before the server has closed clears it), so every notice shown is recorded.
                let bob = try await ChatPage.open(
                    browser, tab: "bob", url: "http://127.0.0.1:\(webPort)/", context: try await browser.newContext())
                try await bob.logIn("bob", password: "bob's secret")
                _ = try await browser.evaluate(
                    "bob",
                    """
                    (() => { window.notices = []; const n = document.getElementById('notice');
                      new MutationObserver(() => window.notices.push(n.textContent)).observe(n, { childList: true, characterData: true, subtree: true });
                      return true })()
                    """, as: Bool.self)
                kill(server.pid, SIGTERM)
                try await browser.wait("bob", until: "window.notices.includes('server going away; reconnecting')")
                #expect(try await server.exitStatus(within: .seconds(20)) == 0)
            } catch {
                await browser.close()
                throw error
            }
            await browser.close()
        }
    }
}
