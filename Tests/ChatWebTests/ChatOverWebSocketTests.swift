import AsyncSocket
import ChatProtocol
import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// The chat over WebSocket at the web port's `/chat` (issue 34 §1): the same sessions as over TCP, in
/// the same router, with the `Origin` check; on loopback. A frame that never comes fails the test at its time limit.
@Suite(.offThePool, TestTiming.timeLimit(minutes: 1)) struct ChatOverWebSocketTests {
    /// A chat server and its web port (allowing `allowedOrigins` besides its own), on free loopback ports.
    static func start(
        group: EventLoopGroup? = nil, limits: ChatServer.Limits = ChatFixture.testLimits, allowedOrigins: [String] = []
    )
        throws -> (ChatFixture, ChatWebServer)
    {
        let chat = try ChatFixture(group: group, limits: limits)
        let web = ChatWebServer(chat: chat.server, port: 0, allowedOrigins: allowedOrigins, group: chat.group)
        try web.start()
        return (chat, web)
    }

    static func chatURL(_ web: ChatWebServer) -> String { "ws://127.0.0.1:\(web.port)/chat" }

    func delivery(_ from: String, _ text: String, _ conversation: String, _ sequence: UInt64) -> ChatMessageV2 {
        .delivery(
            from: from, text: text, isDirect: true, conversation: conversation, sequence: sequence, time: Date(timeIntervalSince1970: 0))
    }

    func accepted(_ name: String, online: [String] = []) -> (ChatMessageV2?) -> Bool {
        { message in
            guard case .loginAccepted(let acceptedName, let list, _, _, true) = message else { return false }
            return acceptedName == name && list == online
        }
    }

    @Test func aWebSocketUserAndATCPUserExchangeDirectMessagesStoredDeliveredAndReceiptedOnce() async throws {
        let (chat, web) = try Self.start()
        defer { web.stop() }
        let ann = V2Peer(endpoint: try Endpoint(webSocket: Self.chatURL(web)), group: chat.group)
        let bob = V2Peer(port: chat.server.port, group: chat.group)
        #expect(accepted("ann")(try await ann.loggedIn("ann", password: "ann's secret")))
        #expect(accepted("bob", online: ["ann"])(try await bob.loggedIn("bob", password: "bob's secret")))
        #expect(try await ann.next() == .presence(name: "bob", online: true))
        // Each way: stored and echoed to the sender, delivered, acknowledged, and the receipt back.
        let directions = [(ann, "ann", bob, "bob", "hi bob, from a browser"), (bob, "bob", ann, "ann", "hi ann, from a terminal")]
        for (sequence, (sender, from, reader, to, text)) in zip(UInt64(1)..., directions) {
            sender.send(.directMessage(id: 1, to: to, text: text))
            #expect(
                try await sender.next(2) == [
                    .stored(id: 1, conversation: "direct:ann bob", sequence: sequence), delivery(from, text, "direct:ann bob", sequence)
                ])
            #expect(try await reader.next() == delivery(from, text, "direct:ann bob", sequence))
            reader.send(.received(conversation: "direct:ann bob", upTo: sequence))
            #expect(try await sender.next() == .receipt(conversation: "direct:ann bob", upTo: sequence, by: to))
        }
        // Nothing more for either (each `who` answered next, after all that was sent before it).
        for peer in [ann, bob] {
            peer.send(.who(after: nil, limit: 10))
            #expect(try await peer.next() == .onlineUsers(names: ["ann", "bob"], onlineCount: 2, more: false))
        }
        // The store holds each once.
        bob.send(.historyRequest(conversation: "direct:ann bob", limit: 10))
        #expect(
            try await bob.next()
                == .history(
                    conversation: "direct:ann bob",
                    messages: [
                        ChatHistoryEntry(sequence: 1, from: "ann", text: "hi bob, from a browser", time: Date(timeIntervalSince1970: 0)),
                        ChatHistoryEntry(sequence: 2, from: "bob", text: "hi ann, from a terminal", time: Date(timeIntervalSince1970: 0))
                    ]))
        let scrape = body(of: try await get("/metrics", port: web.port))
        for line in [
            "chat_connections{transport=\"websocket\"} 1", "chat_connections{transport=\"tcp\"} 1",
            "chat_connections_opened_total{transport=\"websocket\"} 1", "chat_messages_stored_total 2",
            "chat_messages_delivered_total 4"  // each to both: the sender's own session has the conversation too
        ] {
            #expect(scrape.split(separator: "\n").contains(Substring(line)), "\(line) not in the scrape:\n\(scrape)")
        }
    }

    /// An upgrade request to `/chat` on `port`, with `origin` when given.
    static func upgrade(port: UInt16, origin: String?) -> String {
        "GET /chat HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n"
    }

    @Test func aForeignOriginIsRefused403AndNoSessionIsMade() async throws {
        let (chat, web) = try Self.start()
        defer { web.stop() }
        for origin in ["http://evil.example", "http://127.0.0.1:\(web.port).evil.example", "null", "http://127.0.0.1:1"] {
            let answer = try await httpExchange(port: web.port, Self.upgrade(port: web.port, origin: origin))
            let text = "the origin \(origin) may not open the chat\n"
            #expect(
                answer
                    == "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\n"
                    + "Connection: close\r\n\(securityFields)\r\n\(text)")
        }
        #expect(chat.server.metrics.connectionsOpened[.websocket]?.value == 0)
    }

    @Test func theOwnOriginAnAllowedOneAndNoneAreAcceptedAndLogIn() async throws {
        let (chat, web) = try Self.start(allowedOrigins: ["https://chat.example"])
        defer { web.stop() }
        for (index, origin) in ["http://127.0.0.1:\(web.port)", "http://localhost:\(web.port)", "https://chat.example", nil].enumerated() {
            var configuration = WebSocket.ClientConfiguration()
            if let origin { configuration.headers.append(name: "Origin", value: origin) }
            let socket = try await WebSocketConnection.connect(to: Self.chatURL(web), configuration: configuration, group: chat.group)
            let name = "user\(index)"
            try await socket.send(
                .binary(
                    try ChatCodec(version: .v2).encode(
                        .v2(
                            .login(
                                name: name, password: nil, resumeToken: nil, clientInstance: String(repeating: "ab", count: 16),
                                positions: [:])))))
            let answer = try #require(try await Self.nextFrame(socket))
            guard case .v2(.loginAccepted(name, _, _, _, false)) = answer else {
                Issue.record("\(origin ?? "no origin"): \(answer)")
                return
            }
            _ = await socket.close()
        }
        #expect(chat.server.metrics.connectionsOpened[.websocket]?.value == 4)
    }

    /// Sends `message` as one binary message.
    static func send(_ message: ChatMessageV2, on socket: WebSocketConnection) async throws {
        try await socket.send(.binary(try ChatCodec(version: .v2).encode(.v2(message))))
    }

    @Test func theLoginDeadlineAppliesOverWebSocketAsOverTCP() async throws {
        let clock = ManualClock()
        var limits = ChatServer.Limits()
        limits.loginTimeout = .seconds(10)
        let (chat, web) = try Self.start(group: EventLoopGroup(numberOfThreads: 1, clock: clock, name: "chat-ws-limits"), limits: limits)
        defer { web.stop() }
        let socket = try await WebSocketConnection.connect(to: Self.chatURL(web), group: chat.group)
        try await Self.send(.heartbeat, on: socket)
        #expect(try await Self.nextFrame(socket) == .v2(.heartbeatAck))
        await clock.advance(by: .milliseconds(9_999))
        try await Self.send(.heartbeat, on: socket)
        #expect(try await Self.nextFrame(socket) == .v2(.heartbeatAck))
        await clock.advance(by: .milliseconds(1))
        #expect(
            try await Self.nextFrame(socket)
                == .v2(.error(code: .loginTimeout, detail: "no login within 10 s of connecting", id: nil, retryAfter: nil)))
        #expect(try await Self.nextFrame(socket) == nil)
        #expect(await socket.closeResult.code == .policyViolation)
        #expect(try await chat.log.next().hasPrefix("drop 127.0.0.1:"))
        #expect(chat.server.metrics.connectionsOpened[.websocket]?.value == 1)
    }

    @Test func theRateLimitAppliesOverWebSocketAsOverTCP() async throws {
        var limits = ChatFixture.testLimits
        limits.messageRate = 1
        limits.messageBurst = 3  // the login is one of them
        // On a manual clock: no token comes back however slowly the machine runs.
        let (chat, web) = try Self.start(
            group: EventLoopGroup(numberOfThreads: 1, clock: ManualClock(), name: "chat-ws-rate"), limits: limits)
        defer { web.stop() }
        let socket = try await WebSocketConnection.connect(to: Self.chatURL(web), group: chat.group)
        try await Self.send(
            .login(name: "ann", password: nil, resumeToken: nil, clientInstance: String(repeating: "ab", count: 16), positions: [:]),
            on: socket)
        guard case .v2(.loginAccepted("ann", _, _, _, false))? = try await Self.nextFrame(socket) else {
            Issue.record("ann was not logged in")
            return
        }
        for id: UInt64 in 1...3 { try await Self.send(.broadcast(id: id, text: "m\(id)"), on: socket) }
        // The answers (stored or refused, in either order), her own deliveries skipped.
        var answers: [ChatMessage] = []
        while answers.count < 3, let message = try await Self.nextFrame(socket) {
            if case .v2(.delivery) = message { continue }
            answers.append(message)
        }
        #expect(answers.filter { if case .v2(.stored) = $0 { true } else { false } }.count == 2)
        #expect(
            answers.filter { if case .v2(.error) = $0 { true } else { false } } == [
                .v2(
                    .error(
                        code: .rateLimited, detail: "more than 1 messages a second (burst 3); not sent; try again in 1 s", id: 3,
                        retryAfter: 1))
            ])
    }

    @Test func aTextMessageEndsTheSessionWithItsErrorAndClose1003AndABrokenFrameWith1008() async throws {
        let (chat, web) = try Self.start()
        defer { web.stop() }
        let text = try await WebSocketConnection.connect(to: Self.chatURL(web), group: chat.group)
        try await text.send(.text("{\"login\":\"ann\"}"))
        // The farewell (before any message of a version, in version 1's form, as over TCP), then Close.
        #expect(
            try await Self.nextFrame(text) == .error(code: .protocolError, detail: "a text message (LongLink frames are binary messages)"))
        #expect(try await Self.nextFrame(text) == nil)
        #expect(await text.closeResult.code == .unsupportedData)
        let broken = try await WebSocketConnection.connect(to: Self.chatURL(web), group: chat.group)
        var frame = try ChatCodec(version: .v2).encode(.v2(.heartbeat))
        frame.append(0)  // a byte after the frame
        try await broken.send(.binary(frame))
        #expect(
            try await Self.nextFrame(broken)
                == .error(code: .protocolError, detail: "a binary message of 10 bytes holding a frame of 9 bytes and more"))
        #expect(try await Self.nextFrame(broken) == nil)
        #expect(await broken.closeResult.code == .policyViolation)
    }

    @Test func thePageIsServedWithItsTypeAndTheSecurityFields() async throws {
        let (chat, web) = try Self.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        let page = try await get("/", port: web.port)
        let html = String(decoding: try #require(StaticFiles.bundled.files["/"]).bytes, as: UTF8.self)
        #expect(
            page
                == "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(html.utf8.count)\r\n"
                + "Cache-Control: no-cache\r\nConnection: close\r\n\(securityFields)\r\n\(html)")
    }

    @Test func imServerAnswersTheUpgradeAtChatFromItsOwnAndAnAllowedOriginAndRefusesAForeignOne() async throws {
        let server = try ChildProcess.startProduct(
            "im-server",
            [
                "--port", "0", "--no-discovery", "--store", ":memory:", "--web-port", "0", "--web-allow-origin", "https://chat.example"
            ])
        defer { server.stop() }
        _ = try await server.lines.next()  // listening on
        let web = logText(try await server.lines.next())
        let prefix = "im-server web port on http://127.0.0.1:", suffix = "/ (chat at /chat, metrics at /metrics, health at /healthz)"
        let port = try #require(UInt16(web.dropFirst(prefix.count).dropLast(suffix.count)), "\(web)")
        for (name, origin) in [("ann", "http://127.0.0.1:\(port)"), ("bob", "https://chat.example")] {
            var configuration = WebSocket.ClientConfiguration()
            configuration.headers.append(name: "Origin", value: origin)
            let socket = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(port)/chat", configuration: configuration)
            try await Self.send(
                .login(name: name, password: nil, resumeToken: nil, clientInstance: String(repeating: "cd", count: 16), positions: [:]),
                on: socket)
            guard case .v2(.loginAccepted(name, _, _, _, false))? = try await Self.nextFrame(socket) else {
                Issue.record("\(name) was not logged in")
                return
            }
            _ = await socket.close()
        }
        let refused = try await httpExchange(port: port, Self.upgrade(port: port, origin: "http://evil.example"))
        #expect(refused.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(refused)")
    }

    /// The next chat frame `socket` receives (one binary message each), skipping presence; nil at its end.
    static func nextFrame(_ socket: WebSocketConnection) async throws -> ChatMessage? {
        for await message in socket.messages {
            guard case .binary(let data) = message else {
                Issue.record("not a binary message: \(message)")
                return nil
            }
            var decoder = ChatCodec(version: .v2).makeDecoder()
            let frame = try data.withUnsafeBytes { bytes in
                try FrameBuffer.borrowing(bytes) { buffer throws(FramingError) in try decoder.decode(&buffer) }
            }
            guard let frame = frame.result else { return nil }
            let message = try ChatCodec(version: .v2).message(from: frame)
            if case .v2(.presence) = message { continue }
            if case .v2(.presenceChanges) = message { continue }
            return message
        }
        return nil
    }
}
