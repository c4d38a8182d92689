import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import Dispatch
import Foundation
import LongLink
import Testing
import TestSupport

/// The router's handling of sessions through ``ChatPeer`` with no socket: fake peers, an in-memory
/// store, the routing queue driven by the test.
@Suite(.offThePool) struct RouterSessionTests {
    @Test func aLoginWaitsItsTurnAndWhatTheSessionSentMeanwhileFollowsIt() throws {
        let fixture = RouterFixture()
        let ann = fixture.connect()
        fixture.receive(.login(name: "ann", resumeToken: "t1"), .broadcast(text: "hi"), from: ann)
        #expect(
            ann.calls == [
                .holdAcknowledgements, .admit,
                .send(.loginAccepted(name: "ann", online: [], onlineCount: 0, resumeToken: "t1")),
                .releaseAcknowledgements
            ])
        #expect(fixture.phase(of: ann) == .loggedIn(name: "ann"))
        let stored = fixture.store.lastMessages(in: .room, limit: 10)
        #expect(stored.map { "\($0.sequence) \($0.sender): \($0.text)" } == ["1 ann: hi"])
        #expect(fixture.lines.all == ["login ann from 127.0.0.1:40001"])
    }

    @Test func theResumeTokenTakesTheNameOverAndTheReplacedSessionsCloseIsNoLogout() throws {
        let fixture = RouterFixture()
        let first = fixture.connect(), second = fixture.connect(), third = fixture.connect()
        fixture.receive(.login(name: "ann", resumeToken: "t1"), from: first)
        _ = first.takeCalls()
        fixture.receive(.login(name: "ann", resumeToken: nil), from: third)
        #expect(
            third.takeCalls() == [
                .holdAcknowledgements, .send(.error(code: .nameTaken, detail: "ann is already logged in")), .releaseAcknowledgements
            ])
        #expect(fixture.phase(of: third) == .awaitingLogin)
        fixture.receive(.login(name: "ann", resumeToken: "t1"), from: second)
        #expect(first.takeCalls() == [.send(.error(code: .replaced, detail: "logged in again from another connection")), .close])
        #expect(fixture.phase(of: first) == .replaced(name: "ann"))
        #expect(fixture.phase(of: second) == .loggedIn(name: "ann"))
        fixture.close(first, .byServer)
        #expect(fixture.queue.sync { fixture.router.users["ann"]?.session === second })
        #expect(
            fixture.lines.all == [
                "login ann from 127.0.0.1:40001",
                "refused login ann from 127.0.0.1:40003 (already logged in from 127.0.0.1:40001)",
                "login ann from 127.0.0.1:40002 (replaced its session from 127.0.0.1:40001)",
                "closed the replaced session of ann from 127.0.0.1:40001 (closed by server)"
            ])
    }

    @Test func messagesSentWhileThePasswordIsCheckedAreHeldInThePhaseAndHandledAfterTheLogin() throws {
        let fixture = RouterFixture()
        let bob = fixture.connect()
        let gate = DispatchSemaphore(value: 0)
        for queue in fixture.router.hashing { queue.async { gate.wait() } }
        let login = ChatMessage.v2(
            .login(name: "bob", password: "secret", resumeToken: "tb", clientInstance: String(repeating: "a", count: 32), positions: [:]))
        let broadcast = ChatMessage.v2(.broadcast(id: 1, text: "while checked"))
        fixture.queue.sync { fixture.router.received(login, from: bob) }
        fixture.readLoginRecords()
        fixture.queue.sync { fixture.router.received(broadcast, from: bob) }  // after the login's pass and read
        let attempt = LoginAttempt(
            name: "bob", password: "secret", token: "tb", instance: String(repeating: "a", count: 32), positions: [:],
            presenceChanges: false)
        #expect(fixture.phase(of: bob) == .checkingPassword(attempt, held: [broadcast]))
        #expect(bob.takeCalls() == [.holdAcknowledgements, .releaseAcknowledgements, .admit])
        for _ in fixture.router.hashing { gate.signal() }
        fixture.settle()
        let stored = try #require(fixture.store.lastMessages(in: .room, limit: 1).first)
        #expect(
            bob.calls == [
                .admit,
                .send(.v2(.loginAccepted(name: "bob", online: [], onlineCount: 0, resumeToken: "tb", stored: true))),
                .releaseAcknowledgements,
                .send(.v2(.stored(id: 1, conversation: "room", sequence: 1))),
                .send(
                    .v2(
                        .delivery(
                            from: "bob", text: "while checked", isDirect: false, conversation: "room", sequence: 1, time: stored.time)))
            ])
        #expect(fixture.phase(of: bob) == .loggedIn(name: "bob"))
    }

    @Test func overTheRateTheSessionIsClosingAndWhatItStillSendsIsNotAnswered() throws {
        var limits = ChatServer.Limits()
        limits.messageRate = 1
        limits.messageBurst = 2
        limits.maxRefusedInARow = 1
        let fixture = RouterFixture(limits: limits)
        let ann = fixture.connect()
        fixture.receive(.login(name: "ann", resumeToken: "t1"), from: ann)  // takes one token of two
        _ = ann.takeCalls()
        let refusal = ChatMessage.error(code: .rateLimited, detail: "more than 1 messages a second (burst 2); not sent; try again in 1 s")
        fixture.receive(.broadcast(text: "1"), .broadcast(text: "2"), .broadcast(text: "3"), from: ann)
        let why = "rate limit: more than 1 messages refused in a row"
        #expect(
            ann.takeCalls() == [
                .send(refusal), .send(refusal), .send(.error(code: .rateLimited, detail: "closing the connection: \(why)")), .close
            ])
        #expect(fixture.phase(of: ann) == .closing(reason: why, name: "ann"))
        fixture.receive(.broadcast(text: "4"), from: ann)
        #expect(ann.takeCalls() == [])
        #expect(fixture.store.lastMessages(in: .room, limit: 10).map(\.text) == ["1"])
        fixture.close(ann, .byServer)
        #expect(fixture.queue.sync { fixture.router.users.isEmpty })
        #expect(fixture.lines.all.last == "drop ann (\(why))")
    }

    @Test func aDirectMessageIsStoredDeliveredThroughTheWindowAndItsReceiptReachesTheSender() throws {
        let fixture = RouterFixture()
        let ann = fixture.connect(), bob = fixture.connect()
        for (peer, name) in [(ann, "ann"), (bob, "bob")] {
            let instance = String(repeating: name == "ann" ? "a" : "b", count: 32)
            fixture.receive(
                .v2(.login(name: name, password: "pw-\(name)", resumeToken: "t-\(name)", clientInstance: instance, positions: [:])),
                from: peer)
        }
        _ = ann.takeCalls()
        _ = bob.takeCalls()
        fixture.receive(.v2(.directMessage(id: 9, to: "bob", text: "hello")), from: ann)
        let conversation = ConversationID(between: "ann", and: "bob")
        let stored = try #require(fixture.store.lastMessages(in: conversation, limit: 1).first)
        let delivery = ChatMessage.v2(
            .delivery(from: "ann", text: "hello", isDirect: true, conversation: "direct:ann bob", sequence: 1, time: stored.time))
        #expect(ann.takeCalls() == [.send(.v2(.stored(id: 9, conversation: "direct:ann bob", sequence: 1))), .send(delivery)])
        #expect(bob.takeCalls() == [.send(delivery)])
        fixture.receive(.v2(.received(conversation: "direct:ann bob", upTo: 1)), from: bob)
        #expect(ann.takeCalls() == [.send(.v2(.receipt(conversation: "direct:ann bob", upTo: 1, by: "bob")))])
        #expect(fixture.store.position(of: "bob", in: conversation) == 1)
    }
}
