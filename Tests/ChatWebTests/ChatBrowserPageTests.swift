import ChatProtocol
import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import Testing
import TestSupport

/// The web client's parts and looks in headless Chromium: its frame codec and reconnect schedule (the
/// page's own ES modules, imported in the page), history on scrolling up, a live-only login, and the page
/// at 320 px in the dark, used with the keyboard only.
@Suite(
    .cpuBound(minutes: 2),
    .enabled(if: ChromiumDriver.isInstalled, "Debian's chromium is not installed (scripts/setup.sh installs it)"))
struct ChatBrowserPageTests {
    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test func theModulesEncodeAndDecodeFramesAsPROTOCOLmdSaysAndReconnectOnImClientsSchedule() async throws {
        let (chat, web) = try ChatOverWebSocketTests.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        // A delivery of 600 bytes of text from the Swift codec: over 512 bytes, so zlib-compressed (z = 1).
        let long = String(repeating: "zlib ", count: 120)
        let compressed = try ChatCodec(version: .v2).encode(
            .v2(
                .delivery(
                    from: "ann", text: long, isDirect: false, conversation: "room", sequence: 7,
                    time: Date(timeIntervalSince1970: 1_700_000_000.123))))
        #expect(compressed[4] == 1)
        let browser = try ChromiumSession()
        do {
            try await browser.open("page", url: "http://127.0.0.1:\(web.port)/")
            struct Results: Decodable, Equatable {
                let direct: String
                let heartbeat: String
                let decoded: String
                let roundTrip: String
                let bigFlag: Int
                let errors: [String]
                let delays: [Int]
                let unavailableAfter: Int
                let textBytes: [Int]
                let verdicts: [String]
                let sends: [Int]
            }
            let results = try await browser.evaluate(
                "page",
                """
                (async () => {
                  const f = await import('/frame.js');
                  const s = await import('/schedule.js');
                  const l = await import('/link.js');
                  const t = await import('/tracker.js');
                  const o = await import('/outbox.js');
                  const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
                  const bytes = (text) => new Uint8Array(text.match(/../g).map((h) => parseInt(h, 16))).buffer;
                  const direct = hex(await f.encodeFrame(f.Code.direct, { id: 17, text: 'hi', to: 'bob' }));
                  const heartbeat = hex(await f.encodeFrame(f.Code.heartbeat, {}));
                  const decoded = JSON.stringify(await f.decodeFrame(bytes('\(Self.hex(compressed))')));
                  const big = await f.encodeFrame(f.Code.broadcast, { id: 1, text: 'x'.repeat(600) });
                  const roundTrip = JSON.stringify(await f.decodeFrame(big));
                  const errors = [];
                  for (const frame of ['0003002000000000', '0002002000000a7b7d', '00020020020002' + '7b7d', '0002']) {
                    try { await f.decodeFrame(bytes(frame)); errors.push('none'); } catch (error) { errors.push(error.message); }
                  }
                  const schedule = new s.ReconnectSchedule(() => 0.5);
                  const delays = [];
                  let unavailableAfter = 0;
                  for (let i = 0; i < 8; i += 1) {
                    delays.push(schedule.next().delayMs);
                    if (!unavailableAfter && schedule.isUnavailable) unavailableAfter = schedule.attempts;
                  }
                  const tracker = new t.ReceiveTracker(new Map([['room', 5]]));
                  const verdicts = [tracker.verdict('room', 3), tracker.verdict('room', 8)];
                  tracker.moved('room', 8);
                  verdicts.push(tracker.verdict('room', 10), tracker.verdict('room', 9), tracker.verdict('direct:a b', 4));
                  tracker.connectionEnded();
                  verdicts.push(tracker.verdict('room', 10));
                  const outbox = new o.Outbox([{ id: 3 }, { id: 1 }, { id: 2 }]);
                  const sends = [];
                  const drain = () => { for (let e = outbox.nextToSend(); e; e = outbox.nextToSend()) sends.push(e.id); sends.push(0); };
                  drain();
                  outbox.acknowledge(2);
                  outbox.slowDown();
                  outbox.rewind();
                  drain();
                  outbox.acknowledge(1);
                  drain();
                  outbox.acknowledge(3);
                  outbox.append({ id: 4 });
                  outbox.append({ id: 5 });
                  drain();
                  return { verdicts, sends, direct, heartbeat, decoded, roundTrip, bigFlag: new Uint8Array(big)[4], errors, delays, unavailableAfter,
                    textBytes: [l.jsonTextBytes('hi'), l.jsonTextBytes('"\\\\'), l.jsonTextBytes('\\u001b\\t'), l.jsonTextBytes('é😀')] };
                })()
                """, as: Results.self)
            // docs/PROTOCOL.md "Example bytes (version 2)" and the version 2 heartbeat.
            #expect(
                results
                    == Results(
                        direct: "0002001000002" + "07b226964223a31372c2274657874223a226869222c22746f223a22626f62227d",
                        heartbeat: "000200200000027b7d",
                        decoded:
                            #"{"code":18,"body":{"conversation":"room","direct":false,"from":"ann","seq":7,"text":"\#(long)","time":1700000000123}}"#,
                        roundTrip: #"{"code":17,"body":{"id":1,"text":"\#(String(repeating: "x", count: 600))"}}"#,
                        bigFlag: 1,
                        errors: [
                            "version 3 is not 2", "the header says 10 bytes of body, the message holds 2",
                            "compressed flag 2 is not 0 or 1", "a message of 2 bytes is no frame"
                        ],
                        delays: [500, 2500, 4500, 8500, 16500, 32500, 60500, 60500], unavailableAfter: 3, textBytes: [2, 4, 8, 6],
                        // ReceiveTracker's: a duplicate; a first delivery on the connection skips; a gap; the next; another
                        // conversation's first; after a reconnect, a first again.
                        verdicts: ["duplicate", "deliver", "gap", "deliver", "deliver", "deliver"],
                        // Outbox's: all three in id order; after a pause one at a time (#1, then #3 once #1 is answered);
                        // empty again, the whole window.
                        sends: [1, 2, 3, 0, 1, 0, 3, 0, 4, 5, 0]))
            #expect(try await browser.consoleErrors("page") == [])
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    /// Regression: a server's going-away notice, decoded asynchronously, was dropped when its connection's
    /// close was handled first (the close made it a stale connection's message). The page's ChatLink on a
    /// stand-in WebSocket that delivers the notice and its close back to back, as a server shutting down does.
    @Test func theLastMessageBeforeACloseIsReadBeforeTheClose() async throws {
        let (chat, web) = try ChatOverWebSocketTests.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        let browser = try ChromiumSession()
        do {
            try await browser.open("page", url: "http://127.0.0.1:\(web.port)/")
            let events = try await browser.evaluate(
                "page",
                """
                (async () => {
                  const f = await import('/frame.js');
                  const l = await import('/link.js');
                  const sockets = [];
                  class StandIn {
                    static OPEN = 1;
                    constructor(url) { this.readyState = 0; sockets.push(this); }
                    send() {}
                    close() { this.readyState = 3; }
                  }
                  const real = window.WebSocket;
                  window.WebSocket = StandIn;
                  const events = [];
                  const link = new l.ChatLink({ url: 'ws://127.0.0.1:1/chat', name: 'ann', store: { client: 'c' },
                    state: { outbox: [], positions: new Map(), receipts: new Map() }, onEvent: (e) => events.push(e) });
                  link.start();
                  const socket = sockets[0];
                  socket.readyState = 1;
                  socket.onopen();
                  socket.onmessage({ data: await f.encodeFrame(f.Code.error, { code: 'serverShuttingDown', detail: 'server shutting down' }) });
                  socket.readyState = 3;
                  socket.onclose({ code: 1001 });
                  await link.reads;
                  link.stop();
                  window.WebSocket = real;
                  return events.map((e) => `${e.type}: ${e.state ?? e.text}`);
                })()
                """, as: [String].self)
            #expect(events == ["status: connecting", "notice: server going away; reconnecting", "status: reconnecting"])
            #expect(try await browser.consoleErrors("page") == [])
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    /// A login answered `serverBusy` (issue 35 §3): the page closes the connection and reconnects after
    /// the error's `retryAfter` plus its jitter (7 s + 0.5 × 1 s here), not on its own schedule.
    @Test func aLoginAnsweredServerBusyReconnectsAfterItsRetryAfter() async throws {
        let (chat, web) = try ChatOverWebSocketTests.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        let browser = try ChromiumSession()
        do {
            try await browser.open("page", url: "http://127.0.0.1:\(web.port)/")
            let events = try await browser.evaluate(
                "page",
                """
                (async () => {
                  const f = await import('/frame.js');
                  const l = await import('/link.js');
                  const sockets = [];
                  class StandIn {
                    static OPEN = 1;
                    constructor(url) { this.readyState = 0; sockets.push(this); }
                    send() {}
                    close() { this.readyState = 3; }
                  }
                  const real = window.WebSocket, realNow = Date.now;
                  window.WebSocket = StandIn;
                  Date.now = () => 1000000;
                  const events = [];
                  const link = new l.ChatLink({ url: 'ws://127.0.0.1:1/chat', name: 'ann', store: { client: 'c' },
                    state: { outbox: [], positions: new Map(), receipts: new Map() }, onEvent: (e) => events.push(e),
                    random: () => 0.5 });
                  link.start();
                  const socket = sockets[0];
                  socket.readyState = 1;
                  socket.onopen();
                  socket.onmessage({ data: await f.encodeFrame(f.Code.error,
                    { code: 'serverBusy', detail: '3 logins are waiting; try again in 7 s', retryAfter: 7 }) });
                  await link.reads;
                  link.stop();
                  window.WebSocket = real;
                  Date.now = realNow;
                  return events.map((e) => `${e.type}: ${e.state ?? e.text}${e.at ? ` at +${e.at - 1000000} ms` : ''}`);
                })()
                """, as: [String].self)
            #expect(
                events == [
                    "status: connecting", "notice: 3 logins are waiting; try again in 7 s", "notice: disconnected (the server is busy)",
                    "status: reconnecting at +7500 ms"
                ])
            #expect(try await browser.consoleErrors("page") == [])
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test func historyComesOnScrollingUpALiveOnlyLoginGetsNoneAndThePageIsReadableAt320PixelsInTheDarkWithTheKeyboardOnly() async throws {
        let (chat, web) = try ChatOverWebSocketTests.start()
        defer { web.stop() }
        let url = "http://127.0.0.1:\(web.port)/"
        let carl = V2Peer(port: chat.server.port, group: chat.group)
        _ = try await carl.loggedIn("carl", password: "carl's secret")
        let texts = (1...120).map { "room message \($0)" }
        for (index, text) in texts.enumerated() { carl.send(.broadcast(id: UInt64(index + 1), text: text)) }
        _ = try await carl.received.first { if case .v2(.stored(120, _, _)) = $0 { true } else { false } }
        let browser = try ChromiumSession()
        do {
            // 320 × 640, dark: the last 50 of the room come as history; scrolling to the top brings 25 more each time, up to 100.
            let dana = try await ChatPage.open(
                browser, tab: "dana", url: url, context: try await browser.newContext(), width: 320, height: 640, dark: true)
            try await dana.logIn("dana", password: "dana's secret")
            try await browser.wait("dana", until: "document.querySelectorAll('#messages .message').length === 50")
            #expect(try await dana.messages().map(\.text) == Array(texts.suffix(50)))
            for shown in [75, 100] {
                try await browser.type("dana", into: "#messages", keys: ["Home"])
                try await browser.wait("dana", until: "document.querySelectorAll('#messages .message').length === \(shown)")
            }
            #expect(try await dana.messages().map(\.text) == Array(texts.suffix(100)))
            #expect(try await dana.messages().map(\.seq) == Array(21...120))
            // Nothing wider than the viewport; the dark colours; a keyboard user reaches carl's name with Tab and opens him with Enter.
            #expect(try await browser.evaluate("dana", "document.documentElement.scrollWidth", as: Int.self) == 320)
            #expect(
                try await browser.evaluate("dana", "getComputedStyle(document.body).backgroundColor", as: String.self) == "rgb(22, 23, 26)")
            try await browser.type("dana", into: "#logout", keys: ["Tab", "Tab"])
            #expect(
                try await browser.evaluate("dana", "document.activeElement.dataset.name ?? document.activeElement.id", as: String.self)
                    == "carl")
            try await browser.type("dana", keys: ["Enter"])
            try await browser.wait("dana", until: "document.getElementById('conversation-title').textContent === 'With carl'")
            try await browser.type("dana", into: "#text", "hello carl, from 320 px", keys: ["Enter"])
            try await dana.waitForMessage(from: "dana", "hello carl, from 320 px", state: "stored")
            try await dana.keepScreenshot("chat-narrow-dark")
            #expect(try await browser.consoleErrors("dana") == [])

            // A wrong password for a claimed name: refused, said on the login form, no reconnecting.
            try await browser.open("mallory", url: url, context: try await browser.newContext())
            try await browser.wait("mallory", until: "document.activeElement === document.getElementById('name')")
            try await browser.type("mallory", into: "#name", "carl", keys: ["Tab"])
            try await browser.type("mallory", "not carl's secret", keys: ["Enter"])
            try await browser.wait(
                "mallory", until: "!document.getElementById('login').hidden && document.getElementById('login-error').textContent !== ''")
            #expect(
                try await browser.evaluate("mallory", "document.getElementById('login-error').textContent", as: String.self)
                    == "wrong password for carl")
            #expect(try await browser.evaluate("mallory", "document.getElementById('status').dataset.state", as: String.self) == "offline")
            try await browser.close(tab: "mallory")

            // Without a password: live only, said so; no history.
            let eve = try await ChatPage.open(browser, tab: "eve", url: url + "?heartbeat=1", context: try await browser.newContext())
            try await eve.logIn("eve", password: "")
            try await browser.wait("eve", until: "document.getElementById('status').textContent.startsWith('online, live only')")
            carl.send(.broadcast(id: 121, text: "live"))
            try await eve.waitForMessage(from: "carl", "live")
            #expect(try await eve.messages() == [.init(from: "carl", text: "live", state: "", seq: 0)])
            // Heartbeats every second (`?heartbeat=1`), answered by the server: still online after three of them.
            try await waitUntil(within: .seconds(15), "three heartbeats answered") {
                chat.server.metrics.registry.render().contains("\nchat_heartbeats_answered_total 3\n")
            }
            #expect(try await browser.evaluate("eve", "document.getElementById('status').dataset.state", as: String.self) == "online")
            #expect(try await browser.consoleErrors("eve") == [])
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test func messagesRefusedForTheRateAreResentAfterThePauseOnceEachInOrder() async throws {
        var limits = ChatFixture.testLimits
        limits.messageRate = 5
        limits.messageBurst = 5
        let (chat, web) = try ChatOverWebSocketTests.start(limits: limits)
        defer { web.stop() }
        let carl = V2Peer(port: chat.server.port, group: chat.group)
        _ = try await carl.loggedIn("carl", password: "carl's secret")
        let browser = try ChromiumSession()
        do {
            let ann = try await ChatPage.open(
                browser, tab: "ann", url: "http://127.0.0.1:\(web.port)/", context: try await browser.newContext())
            try await ann.logIn("ann", password: "ann's secret")
            // 12 at once against a burst of 5 (the login took one): refused with rateLimited and retryAfter, kept, resent.
            let texts = (1...12).map { "fast \($0)" }
            try await ann.sendAll(texts)
            try await browser.wait(
                "ann", until: "document.querySelectorAll('#messages .message[data-state=stored]').length === 12", within: .seconds(30))
            #expect(try await ann.waiting() == 0)
            let shown = try await ann.messages()
            #expect(shown.map(\.text) == texts, "\(shown)")
            #expect(shown.map(\.seq) == Array(1...12), "\(shown)")
            let delivered = try await carl.received.next(12) { if case .v2(.delivery) = $0 { true } else { false } }
            #expect(
                delivered
                    == texts.enumerated().map {
                        .v2(
                            .delivery(
                                from: "ann", text: $1, isDirect: false, conversation: "room", sequence: UInt64($0 + 1),
                                time: .init(timeIntervalSince1970: 0)))
                    })
            let notice = try await browser.evaluate("ann", "document.getElementById('notice').textContent", as: String.self) ?? ""
            #expect(notice.contains("resending in 1 s"), "\(notice)")
            #expect(try await browser.consoleErrors("ann") == [])
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }
}
