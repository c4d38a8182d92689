import AsyncSocket
@testable import ChatClient
import Foundation
@testable import im_client
import LongLink
import Testing
import TestSupport

/// What the terminal client shows besides the lines' text: their times (a fixed clock and time zone),
/// the names' colours, the status line, and when colour is on.
@Suite(.offThePool) struct ClientScreenTests {
    /// 2023-11-14T22:13:20.123Z.
    static let moment = Date(timeIntervalSince1970: 1_700_000_000.123)
    /// UTC+1, no daylight saving.
    static let zone = TimeZone(secondsFromGMT: 3600)!

    @Test func everyLineHasItsTimeInATerminalAndInAPipeOnlyWithTimestamps() {
        let terminal = ChatLines(style: .terminal, me: "ann", timeZone: Self.zone)
        #expect(terminal.stamped("bob: hi", at: Self.moment) == "23:13 bob: hi")
        #expect(terminal.stamped("  #5 2023-11-14 23:13 bob: hi", at: Self.moment, entry: true) == "  #5 2023-11-14 23:13 bob: hi")
        let pipe = ChatLines(style: .pipe, me: "ann", timeZone: Self.zone)
        #expect(pipe.stamped("bob: hi", at: Self.moment) == "bob: hi")
        let stamped = ChatLines(style: .pipe, me: "ann", timestamps: true, timeZone: Self.zone)
        #expect(stamped.stamped("bob: hi", at: Self.moment) == "2023-11-14T22:13:20.123Z bob: hi")
        #expect(
            stamped.stamped("history room #5 1700000000123 bob: hi", at: Self.moment, entry: true)
                == "2023-11-14T22:13:20.123Z history room #5 1700000000123 bob: hi")
    }

    @Test func clockTimesInTheGivenZone() {
        #expect(ChatLines.clockTime(Self.moment, timeZone: Self.zone, withSeconds: false) == "23:13")
        #expect(ChatLines.clockTime(Self.moment, timeZone: Self.zone, withSeconds: true) == "23:13:20")
        #expect(ChatLines.clockTime(Self.moment, timeZone: TimeZone(secondsFromGMT: -5 * 3600)!, withSeconds: true) == "17:13:20")
        #expect(ChatLines.localTime(Self.moment, withDate: true, timeZone: Self.zone) == "2023-11-14 23:13")
        // Past midnight in the zone: the next day.
        #expect(ChatLines.localTime(Date(timeIntervalSince1970: 1_700_004_000), withDate: true, timeZone: Self.zone) == "2023-11-15 00:20")
        #expect(ChatLines.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ChatLines.iso8601(Date(timeIntervalSince1970: 1.5)) == "1970-01-01T00:00:01.500Z")
        #expect(ChatLines.iso8601(Date(timeIntervalSince1970: 59.0409)) == "1970-01-01T00:00:59.040Z")
    }

    /// Six ANSI colours, one per name from the name's FNV-1a hash: bob 33, carl 34, zed 35; only in a
    /// terminal with colour on, and around the escaped name.
    @Test func namesHaveStableColoursOnlyInATerminal() {
        let colored = ChatLines(style: .terminal, me: "ann", color: true)
        #expect(colored.shown("bob") == "\u{1B}[33mbob\u{1B}[39m")
        #expect(colored.shown("carl") == "\u{1B}[34mcarl\u{1B}[39m")
        #expect(colored.shown("zed") == "\u{1B}[35mzed\u{1B}[39m")
        #expect(colored.shown("b\u{1B}x") == "\u{1B}[\(ANSIColor.forName("b\u{1B}x").rawValue)mb\\u{1B}x\u{1B}[39m")
        #expect(
            colored.delivery(from: "bob", text: "hi\u{7}", isDirect: true, conversation: "direct:ann bob")
                == "\u{1B}[33mbob\u{1B}[39m (direct): hi\\u{7}")
        #expect(colored.accepted(id: 3, .v2(.directMessage(id: 3, to: "carl", text: "yo"))) == "#3 → \u{1B}[34mcarl\u{1B}[39m: yo")
        #expect(colored.receipt(id: 3, by: "carl") == "✓✓ #3 received by \u{1B}[34mcarl\u{1B}[39m")
        #expect(
            colored.presenceChanges(online: ["bob", "zed"], offline: [], onlineCount: 3, unlisted: 0)
                == ["* \u{1B}[33mbob\u{1B}[39m and \u{1B}[35mzed\u{1B}[39m joined"])
        #expect(ChatLines(style: .terminal, me: "ann").shown("bob") == "bob")
        // A pipe never gets colour, even when asked.
        let pipe = ChatLines(style: .pipe, me: "ann", color: true)
        #expect(pipe.shown("bob") == "bob")
        #expect(pipe.presenceChanges(online: ["bob", "zed"], offline: [], onlineCount: 3, unlisted: 0) == ["* joined: bob zed"])
    }

    @Test func protocolOneShowsOwnMessagesAsSent() {
        let terminal = ChatLines(style: .terminal, me: "ann")
        let pipe = ChatLines(style: .pipe, me: "ann")
        #expect(terminal.sent(.directMessage(to: "bob", text: "hi\u{1B}")) == "→ bob: hi\\u{1B}")
        #expect(terminal.sent(.broadcast(text: "hi all")) == "→ everyone: hi all")
        #expect(pipe.sent(.directMessage(to: "bob", text: "hi")) == "sent to bob: hi")
        #expect(pipe.sent(.broadcast(text: "hi all")) == "sent broadcast: hi all")
        #expect(pipe.sent(.heartbeat) == nil)
    }

    @Test func theStatusLine() {
        let now = Self.moment
        func line(_ status: ChatClient.Status, color: Bool = false) -> String {
            status.line(now: now, color: color, timeZone: Self.zone)
        }
        var status = ChatClient.Status(connecting: "127.0.0.1", port: 7777, outboxCount: 0)
        #expect(line(status) == "[connecting to 127.0.0.1:7777…]")
        #expect(line(status, color: true) == "[\u{1B}[33mconnecting to 127.0.0.1:7777…\u{1B}[39m]")
        #expect(!status.isCountingDown)
        status.connection = .loggingIn(name: "ann")
        #expect(line(status) == "[logging in as ann…]")
        status.connection = .online(name: "ann", liveOnly: false)
        #expect(line(status) == "[online as ann]")
        #expect(line(status, color: true) == "[\u{1B}[32monline as ann\u{1B}[39m]")
        status.connection = .online(name: "ann", liveOnly: true)
        status.outboxCount = 1
        #expect(line(status) == "[online as ann (live only) · 1 message waiting]")
        status.outboxCount = 2
        status.inputEnded = true
        #expect(line(status) == "[online as ann (live only) · 2 messages waiting · leaving]")
        status.heartbeatInterval = .seconds(270)
        #expect(line(status) == "[online as ann (live only) · 2 messages waiting · heartbeat 270 s · leaving]")
        status.heartbeatInterval = nil
        status.inputEnded = false
        // 8.2 s ahead: "in 9 s", the time to the second (rounded down).
        status.connection = .reconnecting(attempt: 4, at: now.addingTimeInterval(8.2))
        #expect(status.isCountingDown)
        #expect(line(status) == "[reconnecting in 9 s (attempt 4 at 23:13:28) · 2 messages waiting]")
        status.serverUnavailable = true
        #expect(
            line(status, color: true)
                == "[\u{1B}[31mserver unavailable; reconnecting in 9 s (attempt 4 at 23:13:28)\u{1B}[39m · 2 messages waiting]")
        status.connection = .reconnecting(attempt: 4, at: now)
        #expect(line(status) == "[server unavailable; reconnecting now (attempt 4) · 2 messages waiting]")
        status.serverUnavailable = false
        status.connection = .reconnecting(attempt: nil, at: now.addingTimeInterval(30))
        #expect(line(status) == "[reconnecting in 30 s (at 23:13:50) · 2 messages waiting]")
        status.connection = .offline
        status.outboxCount = nil
        #expect(line(status, color: true) == "[\u{1B}[31moffline\u{1B}[39m]")
    }

    /// https://no-color.org: colour only in a terminal, and not when NO_COLOR has any value but "".
    @Test func colourHonoursNoColor() throws {
        #expect(ClientOptions.wantsColor(terminal: true, environment: [:]))
        #expect(ClientOptions.wantsColor(terminal: true, environment: ["NO_COLOR": ""]))
        #expect(!ClientOptions.wantsColor(terminal: true, environment: ["NO_COLOR": "1"]))
        #expect(!ClientOptions.wantsColor(terminal: true, environment: ["NO_COLOR": "0"]))
        #expect(!ClientOptions.wantsColor(terminal: false, environment: [:]))
        let options = try ClientOptions(arguments: ["ann", "--timestamps"])
        #expect(options.timestamps)
        #expect(try !ClientOptions(arguments: ["ann"]).timestamps)
        let terminal = options.configuration(host: "h", port: 1, password: nil, style: .terminal, environment: [:])
        #expect(terminal.color && terminal.timestamps)
        #expect(!options.configuration(host: "h", port: 1, password: nil, style: .terminal, environment: ["NO_COLOR": "yes"]).color)
        #expect(!options.configuration(host: "h", port: 1, password: nil, style: .pipe, environment: [:]).color)
    }

    /// The whole chain on a fake server, in a terminal's style with a fixed clock: stamped lines, and
    /// the status following the connection and the outbox, in order with the lines; then an error
    /// ends the session with completedWithErrors.
    @Test func theStatusFollowsTheSessionInOrderWithTheLines() async throws {
        let chat = try ClientFixture()
        var configuration = chat.configuration("ann")
        configuration.style = .terminal
        configuration.color = true
        configuration.timeZone = Self.zone
        configuration.clock = { ClientScreenTests.moment }
        let events = EventRecorder<String>()
        let ann = try ChatClient(
            configuration: configuration, group: chat.group, output: { events.record($0) },
            onStatus: { events.record($0.line(now: ClientScreenTests.moment, color: false, timeZone: ClientScreenTests.zone)) },
            onFinish: { events.record("finished \($0)") })
        defer { ann.stop() }
        ann.start()
        let port = chat.server.port
        #expect(
            try await events.next(5) == [
                "[connecting to 127.0.0.1:\(port)…]",
                "23:13 * connected to 127.0.0.1:\(port)", "[logging in as ann…]",
                "23:13 * logged in as ann; online: nobody else", "[online as ann]"
            ])
        ann.handle(line: "/to bob hi")
        #expect(
            try await events.next(4) == [
                "23:13 #1 → \u{1B}[33mbob\u{1B}[39m: hi", "[online as ann · 1 message waiting]", "23:13 ✓ #1 stored", "[online as ann]"
            ])
        ann.handle(line: "/to zed anyone")
        #expect(
            try await events.next(5) == [
                "23:13 #2 → \u{1B}[35mzed\u{1B}[39m: anyone", "[online as ann · 1 message waiting]",
                "23:13 ! unknownRecipient for #2: nobody is called zed", "23:13 ✗ #2 refused", "[online as ann]"
            ])
        ann.handle(line: "/dance")
        #expect(try await events.next() == "23:13 ! unknown command /dance; \(ChatCommand.help)")
        ann.finishInput()
        #expect(
            try await events.next(4) == [
                "[online as ann · leaving]", "23:13 * disconnected (by user)", "[offline · leaving]", "finished completedWithErrors"
            ])
    }

    /// Reconnecting in virtual time, nobody listening: the status counts the attempts, says when the
    /// next one starts (the fixed clock plus its delay; no jitter) and, after the schedule's three,
    /// that the server is unavailable; the message typed meanwhile waits in the outbox.
    @Test func theStatusShowsEachReconnectAndTheServerUnavailable() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock)
        defer { group.shutdown() }
        let chat = try ClientFixture(group: group)
        let nobody = ReservedLoopbackPort()
        defer { nobody.release() }
        var configuration = chat.configuration("ann", port: nobody.port)
        configuration.clock = { ClientScreenTests.moment }
        let statuses = EventRecorder<String>()
        let lines = EventRecorder<String>()
        let ann = try ChatClient(
            configuration: configuration, group: group, output: { lines.record($0) },
            onStatus: { statuses.record($0.line(now: ClientScreenTests.moment, color: false, timeZone: ClientScreenTests.zone)) },
            onFinish: { lines.record("finished \($0)") })
        defer { ann.stop() }
        ann.start()
        #expect(
            try await statuses.next(3) == [
                "[connecting to 127.0.0.1:\(nobody.port)…]", "[reconnecting now (attempt 1)]",
                "[reconnecting in 2 s (attempt 2 at 23:13:22)]"
            ])
        ann.handle(line: "/to bob are you there")
        #expect(try await statuses.next() == "[reconnecting in 2 s (attempt 2 at 23:13:22) · 1 message waiting]")
        await clock.advance(by: .seconds(2))
        #expect(try await statuses.next() == "[reconnecting in 4 s (attempt 3 at 23:13:24) · 1 message waiting]")
        await clock.advance(by: .seconds(4))
        #expect(
            try await statuses.next(2) == [
                "[server unavailable; reconnecting in 4 s (attempt 3 at 23:13:24) · 1 message waiting]",
                "[server unavailable; reconnecting in 8 s (attempt 4 at 23:13:28) · 1 message waiting]"
            ])
        _ = try await lines.first { $0 == "* reconnect attempt 4 in 8 s" }
    }
}
