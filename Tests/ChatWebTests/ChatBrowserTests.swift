import ChatClient
import ChatProtocol
import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import Testing
import TestSupport

/// The web client (issue 34 §2, §3) in headless Chromium (Debian's `chromium`, through
/// `Tests/Interop/chromium_driver.py --script`) against a chat server on loopback: people in browsers
/// (each in a browser context of its own: storage of its own) and a terminal user (im-client's
/// ChatClient, in process, over TCP, its lines as in a pipe) in one chat. Set `CHAT_BROWSER_SCREENSHOTS=DIR` to keep the screenshots (docs/images has them).
@Suite(
    .cpuBound(minutes: 2),
    .enabled(if: ChromiumDriver.isInstalled, "Debian's chromium is not installed (scripts/setup.sh installs it)"))
struct ChatBrowserTests {
    @Test func twoBrowserUsersAndATerminalUserExchangeDirectMessagesAndBroadcastsWithReceiptsPresenceAndUnreadCounts() async throws {
        let (chat, web) = try ChatOverWebSocketTests.start()
        defer { web.stop() }
        let url = "http://127.0.0.1:\(web.port)/"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chat-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ChatClient.Configuration(name: "carl", host: "127.0.0.1", port: chat.server.port)
        configuration.password = "carl's secret"
        configuration.dataDirectory = directory.path
        let carlSays = EventRecorder<String>()
        let carl = try ChatClient(
            configuration: configuration, group: chat.group, output: { carlSays.record($0) },
            onFinish: { carlSays.record("finished \($0)") })
        carl.start()
        defer { carl.stop() }
        _ = try await carlSays.first { $0.hasPrefix("* logged in as carl") }
        let browser = try ChromiumSession()
        do {
            let ann = try await ChatPage.open(browser, tab: "ann", url: url, context: try await browser.newContext())
            try await ann.keepScreenshot("chat-login")
            try await ann.logIn("ann", password: "ann's secret")
            let bob = try await ChatPage.open(browser, tab: "bob", url: url, context: try await browser.newContext())
            try await bob.logIn("bob", password: "bob's secret")
            // Presence: each sees the other two (the login's list, then the presence tick).
            try await browser.wait("ann", until: "document.querySelectorAll('#online button').length === 2")
            #expect(try await ann.online() == ["bob", "carl"])
            #expect(try await bob.online() == ["ann", "carl"])

            // A broadcast from a browser: ✓ once stored, shown to bob, delivered to carl.
            try await ann.send("hello everyone")
            try await ann.waitForMessage(from: "ann", "hello everyone", state: "stored")
            try await bob.waitForMessage(from: "ann", "hello everyone")
            _ = try await carlSays.first { $0 == "ann: hello everyone" }

            // A direct message with /to: bob's page counts it unread; ✓✓ once bob's page has it.
            try await ann.send("/to bob hi bob")
            try await bob.browser.wait(
                "bob",
                until: "document.querySelector('#conversations button[data-conversation=\"direct:ann bob\"] .unread')?.textContent === '1'")
            try await ann.openConversation("direct:ann bob")
            try await ann.waitForMessage(from: "ann", "hi bob", state: "received")
            // bob answers by clicking ann's name and typing; the unread count goes when he opens it.
            _ = try await browser.evaluate("bob", "document.querySelector('#online button[data-name=\"ann\"]').click()", as: Bool.self)
            #expect(try await bob.unread("direct:ann bob") == "")
            try await bob.waitForMessage(from: "ann", "hi bob")
            try await bob.send("hi ann")
            try await ann.waitForMessage(from: "bob", "hi ann")
            try await bob.waitForMessage(from: "bob", "hi ann", state: "received")
            try await ann.keepScreenshot("chat")

            // The terminal user and a browser user, both ways.
            carl.handle(line: "/to ann from the terminal")
            _ = try await carlSays.first { $0 == "stored #1" }
            try await ann.openConversation("direct:ann carl")
            try await ann.waitForMessage(from: "carl", "from the terminal")
            _ = try await carlSays.first { $0 == "received #1 by ann" }
            try await ann.send("back to the terminal")
            _ = try await carlSays.first { $0 == "ann (direct): back to the terminal" }
            try await ann.waitForMessage(from: "ann", "back to the terminal", state: "received")
            #expect(
                try await ann.messages() == [
                    .init(from: "carl", text: "from the terminal", state: "", seq: 1),
                    .init(from: "ann", text: "back to the terminal", state: "received", seq: 2)
                ])

            // Markup in a message is text: no element made, no script run.
            let attack = "<img src=x onerror=\"window.pwned=1\"><b>bold</b>"
            try await bob.openConversation("room")
            try await bob.send(attack)
            try await ann.openConversation("room")
            try await ann.waitForMessage(from: "bob", attack)
            #expect(try await browser.evaluate("ann", "document.querySelectorAll('#messages img, #messages b').length", as: Int.self) == 0)
            #expect(try await browser.evaluate("ann", "window.pwned === undefined", as: Bool.self) == true)

            // A reload keeps the history, each message once, and logs in again by itself.
            let before = try await ann.messages()
            try await browser.reload("ann")
            try await ann.waitForStatus("online")
            try await ann.waitForMessage(from: "bob", attack)
            #expect(try await ann.messages() == before)
            #expect(before.map(\.text) == ["hello everyone", attack])

            for tab in ["ann", "bob"] { #expect(try await browser.consoleErrors(tab) == [], "console of \(tab)") }
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }
}
