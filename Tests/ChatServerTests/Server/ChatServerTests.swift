import AsyncSocket
import ChatClient
@testable import ChatProtocol
import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

@Suite struct ChatServerTests {
    @Test func directMessageAndBroadcastReachTheirRecipients() async throws {
        let chat = try ChatFixture()
        let (ann, annOut) = chat.client("ann")
        defer { ann.finishInput() }
        #expect(try await annOut.next(2) == ["* connected to 127.0.0.1:\(chat.server.port)", "* logged in as ann; online: nobody else"])
        let (bob, bobOut) = chat.client("bob")
        defer { bob.finishInput() }
        #expect(try await bobOut.next(2) == ["* connected to 127.0.0.1:\(chat.server.port)", "* logged in as bob; online: ann"])
        #expect(try await annOut.next() == "* bob joined")
        bob.handle(line: "/to ann psst")
        #expect(try await bobOut.next() == "sent to ann: psst")
        #expect(try await annOut.next() == "bob (direct): psst")
        ann.handle(line: "hello everyone")
        #expect(try await annOut.next() == "sent broadcast: hello everyone")
        #expect(try await bobOut.next() == "ann: hello everyone")
        // The sender does not get its own broadcast back; a marker proves nothing else arrived first.
        bob.handle(line: "/to ann marker")
        #expect(try await bobOut.next() == "sent to ann: marker")
        #expect(try await annOut.next() == "bob (direct): marker")
        let logins = try await chat.log.next(2)
        #expect(logins.map { $0.components(separatedBy: " from ")[0] } == ["login ann", "login bob"])
    }

    /// Regression: a live-only user alone online got its own broadcast back (shown as if from another
    /// device), because "one reader" was taken for "a direct message to oneself".
    @Test func aLoneLiveOnlyUserDoesNotGetItsOwnBroadcastBack() async throws {
        let chat = try ChatFixture()
        let (ann, annOut) = chat.client("ann")
        defer { ann.finishInput() }
        _ = try await annOut.next(2)
        ann.handle(line: "anyone here?")
        #expect(try await annOut.next() == "sent broadcast: anyone here?")
        ann.handle(line: "/to ann note to self")
        #expect(try await annOut.next(2) == ["sent to ann: note to self", "ann (direct): note to self"])
    }

    @Test func errorsForUnknownRecipientsAndTakenNames() async throws {
        let chat = try ChatFixture()
        let (ann, annOut) = chat.client("ann")
        defer { ann.finishInput() }
        _ = try await annOut.next(2)
        ann.handle(line: "/to zed are you there")
        #expect(try await annOut.next(2) == ["sent to zed: are you there", "! unknownRecipient: no user named zed has ever logged in"])
        let (_, imposterOut) = chat.client("ann")
        #expect(
            try await imposterOut.next(4) == [
                "* connected to 127.0.0.1:\(chat.server.port)",
                "! nameTaken: ann is already logged in",
                "* disconnected (login refused)",
                "finished loginRefused"
            ])
        #expect(chat.server.onlineUsers == ["ann"])
    }

    /// The operator sees one line per refused login, with the reason and the address.
    @Test func everyRefusedLoginIsLoggedWithItsReason() async throws {
        let chat = try ChatFixture()
        let (ann, annOut) = chat.client("ann")
        defer { ann.finishInput() }
        _ = try await annOut.next(2)
        let login = try await chat.log.next()
        #expect(login.hasPrefix("login ann from 127.0.0.1:"))
        let annAddress = login.replacingOccurrences(of: "login ann from ", with: "")
        var blankRefusal = ""
        do { try UserName.validate("\u{3164}") } catch { blankRefusal = error.description }
        #expect(blankRefusal.contains("U+3164 HANGUL FILLER"))
        for name in ["ann", "ANN", "\u{3164}"] {
            let (_, out) = chat.client(name)
            _ = try await out.next(4)  // connected, the error, disconnected, finished
        }
        // "refused login NAME from 127.0.0.1:PORT (REASON)": each client's port varies.
        let refusals = try await chat.log.next(3).map {
            $0.replacingOccurrences(of: #"from 127\.0\.0\.1:[0-9]+ "#, with: "", options: .regularExpression)
        }
        #expect(
            refusals == [
                "refused login ann (already logged in from \(annAddress))",
                "refused login ANN (ANN is too similar to the existing user ann)",
                "refused login \u{3164} (invalid name: \(blankRefusal))"
            ])
    }

    @Test func logsLoginsLogoutsAndDropsWithTheirCause() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock)
        defer { group.shutdown() }
        let chat = try ChatFixture(idleTimeout: .seconds(30), group: group)
        // ann heartbeats every 10 s; bob logs in over a bare socket and then says nothing.
        let (ann, annOut) = chat.client("ann", heartbeat: .seconds(10))
        _ = try await annOut.next(2)
        let bobDelegate = RecordingDelegate()
        let bob = TCPSocket(delegate: bobDelegate, delegateQueue: nil)
        try bob.connect(toHost: "127.0.0.1", onPort: chat.server.port, withTimeout: 5)
        bob.write(try ChatCodec().encode(.login(name: "bob", resumeToken: nil)), withTimeout: -1, tag: 0)
        let logins = try await chat.log.next(2)
        #expect(logins.map { $0.components(separatedBy: " from ")[0] } == ["login ann", "login bob"])
        #expect(try await annOut.next() == "* bob joined")
        for step in 1...3 {
            await clock.advance(by: .seconds(10))
            if step == 3 {
                let drop = try await chat.log.next()
                #expect(drop == "drop bob (idle timeout)", "\(chat.log.all)")
                #expect(try await annOut.next() == "* bob left")
            }
            // Virtual time must not outrun the real-time round trip of ann's heartbeat: a message to
            // herself comes back after the heartbeat's acknowledgement.
            ann.handle(line: "/to ann ping")
            #expect(try await annOut.next(2) == ["sent to ann: ping", "ann (direct): ping"])
        }
        ann.handle(line: "/quit")
        let logout = try await chat.log.next()
        #expect(logout == "logout ann (closed by client)", "\(chat.log.all)")
        #expect(try await annOut.next(2) == ["* disconnected (by user)", "finished quit"])
    }

    @Test func reconnectingClientTakesItsNameBackFromItsStaleSessionWithItsResumeToken() async throws {
        typealias Event = LongLinkClient<ChatCodec>.Event
        let chat = try ChatFixture()
        /// A raw chat connection that logs in as ann with `token` and returns its first reply.
        func login(token: String?) async throws -> (LongLinkClient<ChatCodec>, EventRecorder<Event>, ChatMessage?) {
            let events = EventRecorder<Event>()
            let client = LongLinkClient(
                codec: ChatCodec(), configuration: .init(host: "127.0.0.1", port: chat.server.port),
                group: chat.group, eventQueue: nil
            ) { events.record($0) }
            client.greeting = .login(name: "ann", resumeToken: token)
            client.connect()
            _ = try await events.next()  // connected
            guard case .received(let reply) = try await events.next() else { return (client, events, nil) }
            return (client, events, reply)
        }
        let (stale, staleEvents, first) = try await login(token: nil)
        defer { stale.disconnect() }
        guard case .loginAccepted("ann", [], 0, let token)? = first else {
            Issue.record("expected a login, got \(String(describing: first))")
            return
        }
        let (intruder, _, refused) = try await login(token: "not-the-token")
        defer { intruder.disconnect() }
        #expect(refused == .error(code: .nameTaken, detail: "ann is already logged in"))
        let (resumed, _, accepted) = try await login(token: token)
        defer { resumed.disconnect() }
        #expect(accepted == .loginAccepted(name: "ann", online: [], onlineCount: 0, resumeToken: token))
        // The stale connection is told and closed; ann stays online through the new one.
        let told = try await staleEvents.next()
        guard case .received(.error(.replaced, _)) = told else { Issue.record("got \(told)"); return }
        let dropped = try await staleEvents.next()
        #expect("\(dropped)" == "disconnected (by server)")
        #expect(chat.server.onlineUsers == ["ann"])
        // One line per event, the refusal with its reason, the takeover named as such (not as a drop of
        // the old session's address).
        let log = try await chat.log.next(3)
        #expect(log.map { $0.components(separatedBy: " from ")[0] } == ["login ann", "refused login ann", "login ann"])
        #expect(log[1].hasSuffix(" (already logged in from \(log[0].components(separatedBy: " from ")[1]))"))
        #expect(log[2].hasSuffix(" (replaced its session from \(log[0].components(separatedBy: " from ")[1]))"))
        let closed = try await chat.log.next()
        #expect(closed.hasPrefix("closed the replaced session of ann from ") && closed.hasSuffix(" (closed by server)"))

    }
}
