import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport

/// Regressions from trying to break the chat.
@Suite struct ChatHardeningTests {
    typealias Event = LongLinkClient<ChatCodec>.Event

    /// A raw chat connection (no ChatClient logic) recording every event.
    func rawLink(_ chat: ChatFixture, greeting: ChatMessage? = nil) async throws -> (LongLinkClient<ChatCodec>, EventRecorder<Event>) {
        let events = EventRecorder<Event>()
        let link = LongLinkClient(
            codec: ChatCodec(), configuration: .init(host: "127.0.0.1", port: chat.server.port),
            group: chat.group, eventQueue: nil
        ) { events.record($0) }
        link.greeting = greeting
        link.connect()
        _ = try await events.next()
        return (link, events)
    }

    func nextMessage(_ events: EventRecorder<Event>) async throws -> ChatMessage? {
        guard case .received(let message) = try await events.next() else { return nil }
        return message
    }

    @Test func textFromTheNetworkCannotDriveTheTerminal() {
        #expect("plain ☺".terminalSafe == "plain ☺")
        #expect("a\u{1B}[31mb\r\n\u{7}".terminalSafe == #"a\u{1B}[31mb\u{D}\u{A}\u{7}"#)
        #expect("\u{9B}2J".terminalSafe == #"\u{9B}2J"#)
    }

    @Test func namesWithInvisibleOrControlCharactersAreRefused() {
        #expect(UserName.isValid("ann"))
        #expect(UserName.isValid("日本語の名前"))
        #expect(!UserName.isValid("ann\u{200B}"))
        #expect(!UserName.isValid("a\u{1B}b"))
        #expect(!UserName.isValid("a b"))
        #expect(!UserName.isValid(String(repeating: "n", count: 33)))
        #expect(!UserName.isValid(""))
    }

    @Test func emptyTextsAndServerOnlyMessagesAreBadRequests() async throws {
        let chat = try ChatFixture()
        let (link, events) = try await rawLink(chat, greeting: .login(name: "mallory", resumeToken: nil))
        defer { link.disconnect() }
        guard case .loginAccepted? = try await nextMessage(events) else { Issue.record("no login"); return }
        link.send(.broadcast(text: "   "))
        #expect(try await nextMessage(events) == .error(code: .badRequest, detail: "empty message"))
        link.send(.delivery(from: "admin", text: "trust me", isDirect: true))
        #expect(try await nextMessage(events) == .error(code: .badRequest, detail: "only the server sends delivery"))
    }

    @Test func loginReplyListsAtMostAHundredNamesButCountsEveryone() async throws {
        let chat = try ChatFixture()
        // 105 users logged in over bare sockets.
        let codec = ChatCodec()
        var sockets: [TCPSocket] = []
        let delegate = RecordingDelegate()
        for index in 0..<105 {
            let socket = TCPSocket(delegate: delegate, delegateQueue: nil)
            try socket.connect(toHost: "127.0.0.1", onPort: chat.server.port, withTimeout: TestTiming.hangTimeout(5))
            socket.write(try codec.encode(.login(name: String(format: "user%03d", index), resumeToken: nil)), withTimeout: -1, tag: 0)
            sockets.append(socket)
        }
        defer { sockets.forEach { $0.disconnect() } }
        for _ in 0..<105 { _ = try await chat.log.next() }
        let (link, events) = try await rawLink(chat, greeting: .login(name: "late", resumeToken: nil))
        defer { link.disconnect() }
        guard case .loginAccepted("late", let online, let count, _)? = try await nextMessage(events) else {
            Issue.record("no login reply")
            return
        }
        #expect(count == 105)
        #expect(online == (0..<100).map { String(format: "user%03d", $0) })
    }

    @Test func overlongLinesAreRefusedLocallyWithAShortMessage() async throws {
        let chat = try ChatFixture()
        let (ann, annOut) = chat.client("ann")
        defer { ann.finishInput() }
        _ = try await annOut.next(2)
        let line = String(repeating: "A", count: 100_000)
        #expect(throws: FramingError.messageTooLong(length: 100_011, maxLength: 65_536)) {
            try ChatCodec().encode(.broadcast(text: line))
        }
        // The client checks the text limit itself, before the frame limit could refuse it.
        ann.handle(line: line)
        #expect(try await annOut.next() == "! not sent: the text is 100000 bytes as sent (JSON); at most 65000")
        // Counted as JSON writes it: 32,501 quotes are 65,002 bytes.
        ann.handle(line: String(repeating: "\"", count: 32_501))
        #expect(try await annOut.next() == "! not sent: the text is 65002 bytes as sent (JSON); at most 65000")
        let longest = String(repeating: "b", count: 65_000)
        ann.handle(line: longest)
        #expect(try await annOut.next() == "sent broadcast: \(longest)")
    }

    @Test func linesAfterQuitAreNotSent() async throws {
        let chat = try ChatFixture()
        let (bob, bobOut) = chat.client("bob")
        defer { bob.finishInput() }
        _ = try await bobOut.next(2)
        let (ann, annOut) = chat.client("ann")
        _ = try await annOut.next(2)
        #expect(try await bobOut.next() == "* ann joined")
        ann.handle(line: "before quit")
        ann.handle(line: "/quit")
        ann.handle(line: "after quit")
        #expect(try await bobOut.next(2) == ["ann: before quit", "* ann left"])
        #expect(try await annOut.next(3) == ["sent broadcast: before quit", "* disconnected (by user)", "finished quit"])
    }

    @Test func repliesToTheLastLinesArriveBeforeAPipedClientLeaves() async throws {
        let chat = try ChatFixture()
        let (ann, annOut) = chat.client("ann")
        defer { ann.finishInput() }
        _ = try await annOut.next(2)
        // Input ends at once, as with `im-client ann </dev/null` while ann is online.
        let (imposter, imposterOut) = chat.client("ann")
        imposter.finishInput()
        #expect(
            try await imposterOut.next(4) == [
                "* connected to 127.0.0.1:\(chat.server.port)", "! nameTaken: ann is already logged in",
                "* disconnected (login refused)", "finished loginRefused"
            ])
        // `printf '/to x y\n' | im-client dan`: the error comes back before the client leaves, which
        // then ends with completedWithErrors (exit status 4), not quit. The line saying the message was
        // sent may come before or after the connection's.
        let (dan, danOut) = chat.client("dan")
        dan.handle(line: "/to nobody hello")
        dan.finishInput()
        let lines = try await danOut.next(6)
        #expect(
            lines.filter { $0 != "sent to nobody: hello" } == [
                "* connected to 127.0.0.1:\(chat.server.port)", "* logged in as dan; online: ann",
                "! unknownRecipient: no user named nobody has ever logged in", "* disconnected (by user)",
                "finished completedWithErrors"
            ])
        #expect(lines.contains("sent to nobody: hello"))
    }

    @Test func listeningAddressShowsIPv6InBrackets() throws {
        let server = ChatServer(host: "::1", port: 0)
        try server.start()
        defer { server.stop() }
        #expect(server.localAddress?.description == "[::1]:\(server.port)")
    }
}
