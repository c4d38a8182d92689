import ChatProtocol
import Dispatch
import Foundation
import Metrics
import Testing
import TestSupport

@testable import ChatServer

/// The chat's metrics (``ChatMetrics``) after a chat scripted through fake peers: every counter's exact
/// value, as `/metrics` renders it.
@Suite(.offThePool) struct RouterMetricsTests {
    /// The scrape without the commit histogram's buckets and sum, which depend on how long the store took.
    static func countersOnly(_ metrics: ChatMetrics) -> String {
        metrics.render().split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("chat_store_commit_seconds_bucket") && !$0.hasPrefix("chat_store_commit_seconds_sum") }
            .joined(separator: "\n")
    }

    @Test func aScriptedChatCountsTwoLoginsThreeStoredThreeDeliveredAndEachRefusalByReason() throws {
        let fixture = RouterFixture()
        let metrics = fixture.router.metrics
        let ann = fixture.connect(), bob = fixture.connect(), bad = fixture.connect(), anonymous = fixture.connect()
        fixture.receive(.login(name: "ann", resumeToken: nil), from: ann)
        fixture.receive(.login(name: "bob", resumeToken: nil), from: bob)
        fixture.receive(.login(name: "a b", resumeToken: nil), from: bad)  // a space: invalidName
        // Three in one pass of the routing queue: one group commit.
        fixture.receive(
            .directMessage(to: "bob", text: "one"), .directMessage(to: "bob", text: "two"), .directMessage(to: "bob", text: "three"),
            from: ann)
        fixture.receive(.broadcast(text: "  "), from: ann)  // badRequest
        fixture.receive(.directMessage(to: "zed", text: "hello?"), from: ann)  // unknownRecipient
        fixture.receive(.broadcast(text: "me?"), from: anonymous)  // notLoggedIn
        fixture.queue.sync { fixture.router.presenceTick() }  // ann hears bob came: 1 presence frame
        fixture.close(bob, .idleTimeout)
        #expect(fixture.store.lastMessages(in: .init(between: "ann", and: "bob"), limit: 10).map(\.text) == ["one", "two", "three"])
        #expect(bob.calls.filter { if case .send(.delivery) = $0 { true } else { false } }.count == 3)
        #expect(metrics.storeCommitSeconds.snapshot.count == 1)
        #expect(
            Self.countersOnly(metrics) == """
                # HELP chat_connections Chat sessions open now, by transport.
                # TYPE chat_connections gauge
                chat_connections{transport="tcp"} 3
                chat_connections{transport="websocket"} 0
                # HELP chat_connections_opened_total Chat sessions opened since the server started, by transport.
                # TYPE chat_connections_opened_total counter
                chat_connections_opened_total{transport="tcp"} 4
                chat_connections_opened_total{transport="websocket"} 0
                # HELP chat_logins_total Logins decided, by result: accepted, or the error code of the refusal (badPassword, nameTaken, ...).
                # TYPE chat_logins_total counter
                chat_logins_total{result="accepted"} 2
                chat_logins_total{result="invalidName"} 1
                # HELP chat_messages_stored_total Direct messages and broadcasts newly stored (repeats of a stored message not counted).
                # TYPE chat_messages_stored_total counter
                chat_messages_stored_total 3
                # HELP chat_messages_delivered_total Messages sent to a reader's session, live or from its delivery window.
                # TYPE chat_messages_delivered_total counter
                chat_messages_delivered_total 3
                # HELP chat_messages_refused_total Messages answered with an error instead of being stored, by the error code.
                # TYPE chat_messages_refused_total counter
                chat_messages_refused_total{reason="badRequest"} 1
                chat_messages_refused_total{reason="messageTooLong"} 0
                chat_messages_refused_total{reason="notLoggedIn"} 1
                chat_messages_refused_total{reason="rateLimited"} 0
                chat_messages_refused_total{reason="storeUnavailable"} 0
                chat_messages_refused_total{reason="unknownRecipient"} 1
                # HELP chat_store_commit_seconds Seconds each group commit of messages to the store took.
                # TYPE chat_store_commit_seconds histogram
                chat_store_commit_seconds_count 1
                # HELP chat_presence_messages_sent_total Presence frames sent to sessions by the presence ticks (the fan-out of logins and logouts).
                # TYPE chat_presence_messages_sent_total counter
                chat_presence_messages_sent_total 1
                # HELP chat_sessions_evicted_idle_total Sessions dropped because nothing, not even a heartbeat, arrived within the idle timeout.
                # TYPE chat_sessions_evicted_idle_total counter
                chat_sessions_evicted_idle_total 1

                """)
    }

    @Test func storedSessionsCountEveryDeliveryOfTheirWindowsTheSendersOwnIncluded() throws {
        let fixture = RouterFixture()
        let metrics = fixture.router.metrics
        let ann = fixture.connect(), bob = fixture.connect()
        let instance = String(repeating: "ab", count: 16)
        fixture.receive(.v2(.login(name: "ann", password: "a", resumeToken: nil, clientInstance: instance, positions: [:])), from: ann)
        fixture.receive(.v2(.login(name: "bob", password: "b", resumeToken: nil, clientInstance: instance, positions: [:])), from: bob)
        fixture.receive(.v2(.broadcast(id: 1, text: "hi all")), from: ann)
        fixture.receive(.v2(.login(name: "bob", password: "wrong", resumeToken: nil, clientInstance: instance, positions: [:])), from: ann)
        #expect(metrics.loginsAccepted.value == 2)
        #expect(metrics.messagesStored.value == 1)
        // ann's own window and bob's.
        #expect(metrics.messagesDelivered.value == 2)
        // A second login on ann's connection: alreadyLoggedIn.
        #expect(metrics.logins.labels("alreadyLoggedIn").value == 1)
    }

    @Test func messagesOverTheRateAreCountedRateLimited() throws {
        var limits = ChatServer.Limits()
        limits.messageRate = 1
        limits.messageBurst = 2
        let fixture = RouterFixture(limits: limits)
        let ann = fixture.connect()
        fixture.receive(.login(name: "ann", resumeToken: nil), from: ann)  // takes one token
        fixture.receive(.broadcast(text: "1"), .broadcast(text: "2"), .broadcast(text: "3"), from: ann)
        #expect(fixture.router.metrics.messagesStored.value == 1)
        #expect(fixture.router.metrics.messagesRefused.labels("rateLimited").value == 2)
    }

    /// The heap trimmer's activity (``ChatMetrics/sessionEvents``): sessions opened plus closed plus
    /// logins accepted, over both transports; a session still open counts once.
    @Test func sessionEventsCountOpensClosesAndLogins() {
        let fixture = RouterFixture()
        let metrics = fixture.router.metrics
        #expect(metrics.sessionEvents == 0)
        let ann = fixture.connect(), bob = fixture.connect(), bad = fixture.connect()
        fixture.receive(.login(name: "ann", resumeToken: nil), from: ann)
        fixture.receive(.login(name: "a b", resumeToken: nil), from: bad)  // refused: not counted
        fixture.close(ann)
        fixture.close(bob, .idleTimeout)
        // 3 opened, 2 closed, 1 login accepted.
        #expect(metrics.sessionEvents == 6)
        // Another transport's: 2 opened, 1 still open.
        metrics.connectionsOpened[.websocket]?.increment(by: 2)
        metrics.connections[.websocket]?.increment()
        #expect(metrics.sessionEvents == 9)
    }

    /// The heap trimmer's background count (``ChatServer/steadyActivity``): heartbeats answered plus
    /// messages delivered; sessions and logins are not in it.
    @Test func steadyActivityCountsDeliveries() {
        let server = ChatServer(host: "127.0.0.1", port: 0)
        #expect(server.steadyActivity == 0)
        server.metrics.messagesDelivered.increment(by: 3)
        server.metrics.loginsAccepted.increment()
        server.metrics.connectionsOpened[.tcp]?.increment()
        #expect(server.steadyActivity == 3)
        #expect(server.metrics.sessionEvents == 3)  // 1 opened (so 1 closed: none open), 1 login
    }
}
