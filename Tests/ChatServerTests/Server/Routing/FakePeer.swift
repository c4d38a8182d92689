import AsyncSocket
import ChatProtocol
@testable import ChatServer
import Dispatch
import Foundation
import LongLink
import SocketLog
import TestSupport

/// A ``ChatPeer`` with no socket: it records what the router sends it and does to it.
final class FakePeer: ChatPeer, @unchecked Sendable {
    /// What the router did to a peer, in order.
    enum Call: Equatable, CustomStringConvertible {
        case send(ChatMessage)
        case close
        case admit
        case requireAdmission
        case holdAcknowledgements
        case releaseAcknowledgements

        var description: String {
            switch self {
            case .send(let message): return "send \(message)"
            case .close: return "close"
            case .admit: return "admit"
            case .requireAdmission: return "requireAdmission"
            case .holdAcknowledgements: return "holdAcknowledgements"
            case .releaseAcknowledgements: return "releaseAcknowledgements"
            }
        }
    }

    let id: Int
    let remoteAddress: SocketAddress?
    private let log = LockedValue<[Call]>([])
    private let connected = LockedValue(true)

    init(id: Int) {
        self.id = id
        remoteAddress = SocketAddress(ipAddress: "127.0.0.1", port: UInt16(40_000 + id))
    }

    var isConnected: Bool { connected.withLock { $0 } }
    func send(_ message: ChatMessage) { log.withLock { $0.append(.send(message)) } }
    func close() {
        log.withLock { $0.append(.close) }
        connected.withLock { $0 = false }
    }
    func admit() { log.withLock { $0.append(.admit) } }
    func requireAdmission() { log.withLock { $0.append(.requireAdmission) } }
    func holdHeartbeatAcknowledgements() { log.withLock { $0.append(.holdAcknowledgements) } }
    func releaseHeartbeatAcknowledgements() { log.withLock { $0.append(.releaseAcknowledgements) } }

    /// Every call so far.
    var calls: [Call] { log.withLock { $0 } }
    /// The messages sent so far.
    var sent: [ChatMessage] {
        calls.compactMap {
            if case .send(let message) = $0 { return message }
            return nil
        }
    }
    /// Takes the calls so far (the next read starts after them).
    func takeCalls() -> [Call] {
        log.withLock { calls in
            defer { calls = [] }; return calls
        }
    }
}

/// A ``Router`` on a queue of its own with an in-memory store, a clock the test moves, no presence
/// timer (ticks when the test says) and the log lines recorded: the router's logic with no socket.
final class RouterFixture: @unchecked Sendable {
    let queue = DispatchQueue(label: "RouterFixture.routing")
    let store = InMemoryMessageStore()
    let now = LockedValue<UInt64>(1_000_000_000)
    let lines = EventRecorder<String>()
    let router: Router
    private var nextID = 1

    /// `routed`: the store the router uses, made from ``store`` (a ``HookedStore`` around it, say).
    init(
        limits: ChatServer.Limits = ChatServer.Limits(),
        routed: (InMemoryMessageStore) -> any MessageStore = { $0 }
    ) {
        let now = self.now
        router = Router(
            store: routed(store), hasher: PasswordHasher(limits: .minimum), throttle: LoginThrottle(), queue: queue, limits: limits,
            clock: { now.withLock { $0 } }, logger: .recording(into: lines, level: .debug))
        router.presence.interval = nil
    }

    /// A new peer, opened on the router.
    func connect() -> FakePeer {
        let peer = FakePeer(id: nextID)
        nextID += 1
        queue.sync { router.opened(peer) }
        return peer
    }

    /// `messages` from `peer`, as its transport hands them over, then everything they queued on the
    /// routing queue (login passes, group commits) and the password checks, until nothing is left.
    func receive(_ messages: ChatMessage..., from peer: FakePeer) {
        queue.sync { for message in messages { router.received(message, from: peer) } }
        settle()
    }

    /// Runs what is queued on the routing, hashing and login store queues until all are idle (a bounded
    /// number of rounds: each round drains what the one before queued).
    func settle() {
        let (hashing, lanes) = queue.sync { (router.hashing, router.logins.storeLanes) }
        for _ in 0..<8 {
            queue.sync {}
            for queue in hashing + lanes { queue.sync {} }
        }
        queue.sync {}
    }

    /// Lets the login passes queued so far run, and the user records they read come back (not the
    /// password checks: a test may hold the hashing queues).
    func readLoginRecords() {
        queue.sync {}
        for lane in queue.sync(execute: { router.logins.storeLanes }) { lane.sync {} }
        queue.sync {}
    }

    /// `peer` closed for `reason`.
    func close(_ peer: FakePeer, _ reason: LongLinkServer<ChatCodec>.CloseReason = .byClient) {
        queue.sync { router.closed(peer, reason) }
        settle()
    }

    /// The phase of `peer`'s session.
    func phase(of peer: FakePeer) -> SessionPhase { queue.sync { router.sessions.phase(of: peer) } }
}
