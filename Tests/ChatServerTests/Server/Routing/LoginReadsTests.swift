import AsyncSocket
import ChatProtocol
@testable import ChatServer
import Dispatch
import Foundation
import LongLink
import Testing
import TestSupport

/// A login's store calls run off the routing queue (Router+LoginReads), at most
/// ``Router/maxLoginStoreWork`` at once; a message stored while a window is read still reaches it; a
/// login behind too long a queue is answered `serverBusy` (issue 35 §3).
@Suite struct LoginReadsTests {
    static let instance = String(repeating: "a", count: 32)

    static func login(_ name: String, password: String? = nil) -> ChatMessage {
        .v2(.login(name: name, password: password, resumeToken: nil, clientInstance: instance, positions: [:]))
    }

    /// A gate a store hook waits at: `entered` once per caller that reached it.
    final class Gate: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let passage = DispatchSemaphore(value: 0)
        let isOpen = LockedValue(false)

        func wait() {
            guard !isOpen.withLock({ $0 }) else { return }
            entered.signal()
            passage.wait()
        }

        /// Opens it for good, letting the `waiting` callers that reached it through.
        func open(releasing waiting: Int) {
            isOpen.withLock { $0 = true }
            for _ in 0..<waiting { passage.signal() }
        }
    }

    /// Regression (issue 35 §3): a login read its user's record on the routing queue, so every other
    /// session of the node waited for each round trip of every login (about 30 logins a second on a
    /// cluster node after another node died). Now the routing queue delivers a message between two
    /// users while a third user's record is being read.
    @Test func theRoutingQueueDeliversWhileALoginsRecordIsRead() throws {
        let gate = Gate()
        let fixture = RouterFixture { store in HookedStore(store) { call in if call == "user carol" { gate.wait() } } }
        defer { gate.open(releasing: 1) }
        let ann = fixture.connect()
        let bob = fixture.connect()
        let carol = fixture.connect()
        fixture.receive(Self.login("ann"), from: ann)
        fixture.receive(Self.login("bob"), from: bob)
        fixture.queue.sync { fixture.router.received(Self.login("carol"), from: carol) }
        #expect(gate.entered.wait(timeout: .now() + 10) == .success)
        fixture.queue.sync { fixture.router.received(.v2(.directMessage(id: 1, to: "bob", text: "hi")), from: ann) }
        let flushed = DispatchSemaphore(value: 0)
        fixture.queue.async { flushed.signal() }  // after the group commit the message queued
        #expect(flushed.wait(timeout: .now() + 10) == .success)
        guard case .v2(.delivery("ann", "hi", true, _, nil, _))? = bob.sent.last else {
            Issue.record("bob got \(bob.sent)")
            return
        }
        #expect(fixture.phase(of: carol) == .loginQueued(login: Self.login("carol"), held: []))
        gate.open(releasing: 1)
        fixture.settle()
        #expect(fixture.phase(of: carol) == .loggedIn(name: "carol"))
    }

    /// A broadcast stored after ann's window read the room's head, and before ann is admitted, is
    /// delivered to ann at its login: the router notes what it fans out meanwhile. (Without the note
    /// it waited in the store until the next message of the room.)
    @Test func aMessageStoredWhileAWindowIsReadIsDeliveredAtTheLogin() throws {
        let gate = Gate()
        let fixture = RouterFixture { store in HookedStore(store) { call in if call == "position ann room" { gate.wait() } } }
        defer { gate.open(releasing: 1) }
        let ann = fixture.connect()
        let bob = fixture.connect()
        fixture.receive(Self.login("bob"), from: bob)
        fixture.queue.sync { fixture.router.received(Self.login("ann", password: "ann's secret"), from: ann) }
        #expect(gate.entered.wait(timeout: .now() + 10) == .success)  // the room's head (0) is read
        fixture.queue.sync { fixture.router.received(.v2(.broadcast(id: 1, text: "while ann's window was read")), from: bob) }
        fixture.queue.sync {}  // the group commit
        #expect(fixture.store.head(of: .room) == 1)
        gate.open(releasing: 1)
        fixture.settle()
        let deliveries = ann.sent.compactMap { message -> String? in
            guard case .v2(.delivery(let from, let text, _, let conversation, let sequence?, _)) = message else { return nil }
            return "\(conversation)#\(sequence) \(from): \(text)"
        }
        #expect(deliveries == ["room#1 bob: while ann's window was read"])
        #expect(fixture.phase(of: ann) == .loggedIn(name: "ann"))
    }

    /// At most 16 logins read the store at once; the rest wait their turn. A login arriving when the
    /// oldest waiting one has waited 6 s (over half the 10 s login deadline) is refused at once,
    /// `serverBusy` with `retryAfter` 30 (5 waiting × 6 s / 1 answered: none was, one is counted;
    /// version 1: `serverFull`); one arriving after 4.5 s waits, however high the estimate (regression:
    /// the estimate alone refused logins for 60 s after a store stall of 1.5 s). Once the store
    /// answers, every waiting login is accepted.
    @Test func aLoginBehindMoreThanHalfTheLoginDeadlineOfWaitingIsAnsweredServerBusy() throws {
        let gate = Gate()
        let fixture = RouterFixture { store in HookedStore(store) { call in if call.hasPrefix("user u") { gate.wait() } } }
        defer { gate.open(releasing: 16) }
        let peers = (1...20).map { _ in fixture.connect() }
        fixture.queue.sync {
            for (index, peer) in peers.enumerated() { fixture.router.received(Self.login("u\(index + 1)"), from: peer) }
        }
        for _ in 0..<16 { #expect(gate.entered.wait(timeout: .now() + 10) == .success) }
        fixture.queue.sync {}
        #expect(fixture.queue.sync { fixture.router.logins.storeWork } == 16)
        #expect(fixture.queue.sync { fixture.router.logins.backlog } == 4)

        fixture.now.withLock { $0 += 4_500_000_000 }
        let patient = fixture.connect()
        fixture.queue.sync { fixture.router.received(Self.login("u21"), from: patient) }
        #expect(fixture.phase(of: patient) == .loginQueued(login: Self.login("u21"), held: []))

        fixture.now.withLock { $0 += 1_500_000_000 }
        let late = fixture.connect()
        let lateV1 = fixture.connect()
        fixture.queue.sync {
            fixture.router.received(Self.login("u22"), from: late)
            fixture.router.received(.login(name: "u23", resumeToken: nil), from: lateV1)
        }
        let detail = "5 logins are waiting; try again in 30 s"
        #expect(late.takeCalls() == [.send(.v2(.error(code: .serverBusy, detail: detail, id: nil, retryAfter: 30)))])
        #expect(lateV1.takeCalls() == [.send(.error(code: .serverFull, detail: detail))])
        #expect(fixture.phase(of: late) == .awaitingLogin)  // open, under its login deadline: its client closes it
        #expect(
            fixture.lines.all.suffix(2) == [
                "refused login u22 from 127.0.0.1:40022 (server busy: 5 logins waiting)",
                "refused login u23 from 127.0.0.1:40023 (server busy: 5 logins waiting)"
            ])
        #expect(fixture.router.metrics.logins.labels("serverBusy").value == 1)

        gate.open(releasing: 16)
        fixture.settle()
        let accepted = (peers + [patient]).filter { peer in
            guard case .v2(.loginAccepted)? = peer.sent.first else { return false }
            return true
        }
        #expect(accepted.count == 21)
        #expect(fixture.queue.sync { fixture.router.logins.storeWork } == 0)
    }

    /// A stored login whose password is checked while new logins hold all 16 store lanes waits for the
    /// first lane to free up (before any login still queued), and then logs in.
    @Test func aStoredSessionsReadWaitsForALaneWhenNewLoginsHoldThemAll() throws {
        let gate = Gate()
        let fixture = RouterFixture { store in HookedStore(store) { call in if call.hasPrefix("user u") { gate.wait() } } }
        defer { gate.open(releasing: 16) }
        let hashing = DispatchSemaphore(value: 0)
        for queue in fixture.router.hashing { queue.async { hashing.wait() } }
        let ann = fixture.connect()
        fixture.queue.sync { fixture.router.received(Self.login("ann", password: "ann's secret"), from: ann) }
        fixture.readLoginRecords()  // her record read; her password waits behind the held hashing queues
        let peers = (1...17).map { _ in fixture.connect() }
        fixture.queue.sync {
            for (index, peer) in peers.enumerated() { fixture.router.received(Self.login("u\(index + 1)"), from: peer) }
        }
        for _ in 0..<16 { #expect(gate.entered.wait(timeout: .now() + 10) == .success) }
        hashing.signal()
        hashing.signal()
        for queue in fixture.router.hashing { queue.sync {} }
        fixture.queue.sync {}  // her password checked: her window's read needs a lane
        #expect(fixture.queue.sync { fixture.router.logins.laneWaiters.count } == 1)
        #expect(fixture.queue.sync { fixture.router.logins.storeWork } == 16)
        #expect(fixture.queue.sync { fixture.router.logins.laneRoom } == 0)
        #expect(fixture.queue.sync { fixture.router.logins.backlog } == 1)  // u17
        gate.open(releasing: 16)
        fixture.settle()
        #expect(fixture.phase(of: ann) == .loggedIn(name: "ann"))
        #expect(peers.allSatisfy { fixture.phase(of: $0) == .loggedIn(name: "u\($0.id - 1)") })
        #expect(fixture.queue.sync { fixture.router.logins.storeWork } == 0)
    }

    /// The rate behind ``Router/Logins/expectedWait(now:)``: the logins answered while the oldest
    /// waiting one waited.
    @Test func theExpectedWaitIsTheBacklogAtTheRateLoginsWereAnsweredWhileTheOldestWaited() {
        var logins = Router.Logins(hasher: PasswordHasher(limits: .minimum), throttle: LoginThrottle())
        let peer = FakePeer(id: 1)
        #expect(logins.expectedWait(now: 5_000_000_000) == nil)  // none waits
        logins.answered = 100
        for _ in 0..<30 { logins.pending.append(.init(session: peer, arrived: 1_000_000_000, answeredBefore: 100)) }
        #expect(logins.oldestWait(now: 1_500_000_000) == 0.5)
        #expect(logins.expectedWait(now: 1_500_000_000) == 15.0)  // 30 × 0.5 s / 1 (none answered: one counted)
        logins.answered = 120
        #expect(logins.expectedWait(now: 3_000_000_000) == 3.0)  // 30 waiting × 2 s / 20 answered
        _ = logins.takeBatch(10)
        #expect(logins.backlog == 20)
        #expect(logins.expectedWait(now: 3_000_000_000) == 2.0)  // 20 × 2 s / 20
    }
}
