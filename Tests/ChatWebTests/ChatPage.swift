import Foundation
import Testing
import TestSupport

/// The web client (`Sources/ChatWeb/Web`) in one tab of a ``ChromiumSession``, seen the way a person
/// does: through its form fields, keys and the elements it shows. Every question is a DOM query; every
/// wait polls in the page (bounded).
struct ChatPage {
    let browser: ChromiumSession
    /// The tab's name in the session.
    let tab: String

    /// Where screenshots go when the test is asked to keep them (`CHAT_BROWSER_SCREENSHOTS=DIR`), else nil.
    static let screenshotDirectory = ProcessInfo.processInfo.environment["CHAT_BROWSER_SCREENSHOTS"]

    /// Opens `url` in a new tab `tab` of browser context `context`.
    static func open(
        _ browser: ChromiumSession, tab: String, url: String, context: String?, width: Int = 720, height: Int = 360, dark: Bool = false
    ) async throws -> ChatPage {
        try await browser.open(tab, url: url, context: context, width: width, height: height, dark: dark)
        return ChatPage(browser: browser, tab: tab)
    }

    /// A JavaScript string literal of `text`.
    static func literal(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }

    /// Logs in with the keyboard only: the name, Tab, the password, Enter; waits until online.
    func logIn(_ name: String, password: String) async throws {
        try await browser.wait(tab, until: "document.activeElement === document.getElementById('name')")
        try await browser.type(tab, into: "#name", name, keys: ["Tab"])
        try await browser.type(tab, password, keys: ["Enter"])
        try await waitForStatus("online")
    }

    func waitForStatus(_ state: String, within limit: Duration = .seconds(15)) async throws {
        try await browser.wait(tab, until: "document.getElementById('status').dataset.state === \(Self.literal(state))", within: limit)
    }

    /// Types `line` into the message field and presses Enter.
    func send(_ line: String) async throws {
        try await browser.type(tab, into: "#text", line, keys: ["Enter"])
    }

    /// Opens a conversation by clicking its entry in the list (`room` or `direct:a b`).
    func openConversation(_ conversation: String) async throws {
        try await browser.wait(
            tab, until: "document.querySelector('#conversations button[data-conversation=\(Self.literal(conversation))]')")
        _ = try await browser.evaluate(
            tab, "document.querySelector('#conversations button[data-conversation=\(Self.literal(conversation))]').click()", as: Bool.self)
    }

    /// The shown conversation's messages: `from`, text and mark state (`pending`, `stored`, `received`, or
    /// empty for others' messages), in the order shown.
    func messages() async throws -> [Shown] {
        try await browser.evaluate(
            tab,
            """
            [...document.querySelectorAll('#messages .message')].map((node) => ({
              from: node.querySelector('.from').textContent, text: node.querySelector('.text').textContent,
              state: node.dataset.state ?? '', seq: Number(node.dataset.seq ?? 0) }))
            """, as: [Shown].self) ?? []
    }

    struct Shown: Decodable, Equatable, CustomStringConvertible {
        let from: String
        let text: String
        let state: String
        let seq: Int
        var description: String { "\(from): \(text) [\(state) #\(seq)]" }
    }

    /// Waits until the shown conversation has a message from `from` with `text` in `state` (any state
    /// when nil).
    func waitForMessage(from: String, _ text: String, state: String? = nil, within limit: Duration = .seconds(15)) async throws {
        let stateCheck = state.map { " && node.dataset.state === \(Self.literal($0))" } ?? ""
        try await browser.wait(
            tab,
            until: """
                [...document.querySelectorAll('#messages .message')].some((node) =>
                  node.querySelector('.from').textContent === \(Self.literal(from))
                  && node.querySelector('.text').textContent === \(Self.literal(text))\(stateCheck))
                """, within: limit)
    }

    /// The unread count shown beside `conversation` ("" when none).
    func unread(_ conversation: String) async throws -> String {
        try await browser.evaluate(
            tab,
            "document.querySelector('#conversations button[data-conversation=\(Self.literal(conversation))] .unread')?.textContent ?? 'none'",
            as: String.self) ?? "none"
    }

    /// The names listed as online.
    func online() async throws -> [String] {
        try await browser.evaluate(tab, "[...document.querySelectorAll('#online button')].map((b) => b.dataset.name)", as: [String].self)
            ?? []
    }

    /// Keeps a screenshot as `name`.png when asked to (``screenshotDirectory``).
    func keepScreenshot(_ name: String) async throws {
        guard let directory = Self.screenshotDirectory else { return }
        try await browser.screenshot(tab, to: URL(fileURLWithPath: directory).appendingPathComponent("\(name).png").path)
    }
}

extension ChatPage {
    /// Messages the status bar counts as waiting to be stored (the outbox).
    func waiting() async throws -> Int {
        try await browser.evaluate(tab, "Number(document.getElementById('status').dataset.waiting)", as: Int.self) ?? -1
    }

    /// Types `lines` into the message field and sends each (the form's own submit, one after the other,
    /// without waiting for the server).
    func sendAll(_ lines: [String]) async throws {
        let list = "[" + lines.map(Self.literal).joined(separator: ",") + "]"
        _ = try await browser.evaluate(
            tab,
            """
            (() => { const input = document.getElementById('text'); const form = document.getElementById('compose');
              for (const line of \(list)) { input.value = line; form.requestSubmit(); } return true; })()
            """, as: Bool.self)
    }

    /// How many of the shown conversation's own messages are in `state`.
    func count(state: String) async throws -> Int {
        try await browser.evaluate(
            tab, "document.querySelectorAll('#messages .message[data-state=\(Self.literal(state))]').length", as: Int.self)
            ?? -1
    }
}
