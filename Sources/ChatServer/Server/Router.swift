import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketLog

/// Who is logged in, and what to do with each message (internal for tests). Unchecked: used on the
/// routing queue only, which every entry point asserts (`dispatchPrecondition`); `sendToMany` and
/// `cluster` are set once, before the server starts.
///
/// Each session's state is one record in ``sessions`` (``SessionTable``), whose ``SessionPhase``
/// says where it is: awaiting its login, login queued or its password checked (with what it sent
/// meanwhile), logged in, replaced, or being closed. Sessions are reached through ``ChatPeer``.
///
/// Every direct message and broadcast, from clients of either version, is appended to its
/// conversation's log in the ``MessageStore`` before it goes anywhere (``Router+Delivery``): stored
/// sessions (version 2, logged in with a password) get it through their ``DeliveryWindow`` with its
/// sequence number; live-only sessions (version 1, or version 2 without a password) get it at once,
/// without one, if they are online.
final class Router: @unchecked Sendable {
    typealias Session = any ChatPeer
    typealias User = SessionTable.User

    /// The operator's log (``ChatServer``'s logger): logins, logouts and drops at `info`, refused logins
    /// at `notice`, clients' protocol errors at `warning`, store failures at `error`.
    let logger: Logger
    /// The routing queue: everything here runs on it.
    let queue: DispatchQueue
    let store: any MessageStore
    /// Every session's record, and the users logged in.
    var sessions = SessionTable()
    /// Logins waiting their turn, and password checks (Router+LoginQueue, Router+Login).
    var logins: Logins
    /// Group commit and delivery (Router+Delivery).
    var delivery = DeliveryState()
    /// Who is online, and the presence tick (Router+Presence).
    var presence = PresenceState()
    /// The limits on one connection and the log of refusals (Router+Limits).
    var limiting: Limiting
    /// Set by ``beginShutdown()``: messages are no longer taken; counts those that came after.
    var shutdown: Shutdown?
    /// Sends one message to many sessions, encoded once per transport where the transport can (set by
    /// ``ChatServer``: LongLink's ``LongLinkServer/send(_:to:)``); by default one by one.
    var sendToMany: @Sendable (ChatMessage, [any ChatPeer]) -> Void = { message, peers in
        for peer in peers { peer.send(message) }
    }
    /// The other nodes, in cluster mode (``ChatCluster``); nil on a server of its own. Set before the
    /// server starts.
    var cluster: ClusterLink?
    /// The operator's counters (``ChatMetrics``): updated here with atomic adds, read at a scrape.
    let metrics: ChatMetrics

    /// Most messages kept from a session while its login is being checked; more close the connection.
    static let maxHeldMessages = 1_000

    init(
        store: any MessageStore, hasher: PasswordHasher, throttle: LoginThrottle, queue: DispatchQueue,
        limits: ChatServer.Limits = ChatServer.Limits(), clock: @escaping @Sendable () -> UInt64,
        logger: Logger, metrics: ChatMetrics = ChatMetrics()
    ) {
        self.metrics = metrics
        self.store = store
        self.logins = Logins(hasher: hasher, throttle: throttle)
        self.queue = queue
        self.limiting = Limiting(limits: limits, clock: clock)
        self.logger = logger
    }

    /// The users logged in here, by name.
    var users: [String: User] { sessions.users }
    /// The limits on one connection.
    var limits: ChatServer.Limits { limiting.limits }
    /// The queues passwords are checked on (tests hold them to keep logins waiting).
    var hashing: [DispatchQueue] { logins.hashing }

    /// Set once the shutdown began: the late messages it counts (``arrivedLate(_:)``).
    struct Shutdown {
        var lateMessages = 0
    }

    /// Runs `actions` in order (what the services decided).
    func perform(_ actions: [RouterAction]) {
        for action in actions {
            switch action {
            case .send(let message, let peer): peer.send(message)
            case .sendToAll(let message, let peers): sendToMany(message, peers)
            }
        }
    }

    /// Asserts the caller runs on the routing queue.
    func assertOnQueue() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    func name(of session: Session) -> String? { sessions.name(of: session) }

    /// `host:port` of the session's peer, for log lines about sessions not (yet) logged in.
    static func address(of session: Session) -> String { session.address }

    /// Answers a refused login with `code` and `detail` in `version` and logs one line with the reason
    /// the operator reads (`refused login NAME from ADDRESS (REASON)`).
    func refuseLogin(
        _ name: String, _ session: Session, version: ChatProtocolVersion, _ code: ChatErrorCode, _ detail: String,
        reason: String, retryAfter: UInt64? = nil
    ) {
        logger.notice("refused login \(name) from \(Router.address(of: session)) (\(reason))")
        metrics.loginRefused(code)
        session.send(Router.error(code, detail, id: nil, version: version, retryAfter: retryAfter))
    }

    /// What a session did, from its transport (LongLink's events, on the routing queue).
    func handle(_ event: LongLinkServer<ChatCodec>.Event) {
        assertOnQueue()
        switch event {
        case .opened(let session): opened(session)
        case .received(let message, let session): received(message, from: session)
        case .closed(let session, let reason): closed(session, reason)
        case .refused(let address, let refusal): refused(address, refusal)
        case .sendFailed(let message, let reason, let sessions): unsendable(message, reason: reason, to: sessions)
        }
    }

    /// A session opened: its record, awaiting its login, with a full bucket.
    func opened(_ session: Session) {
        assertOnQueue()
        metrics.connections[session.transport]?.increment()
        metrics.connectionsOpened[session.transport]?.increment()
        sessions.open(session, pace: Pace())
    }

    /// A message from `session`: refused over its rate, held while its login waits or is checked,
    /// queued when it is a login, else handled.
    func received(_ message: ChatMessage, from session: Session) {
        assertOnQueue()
        guard shutdown == nil else {
            arrivedLate(message)
            return
        }
        guard withinRate(message, from: session) else { return }
        if sessions.isHolding(session) {
            hold(message, from: session)
        } else if isLoginToQueue(message, from: session) {
            queueLogin(message, from: session)
        } else {
            handle(message, from: session)
        }
    }

    /// `session` closed for `reason`: its record goes; a logged-in user is logged out (or dropped) and
    /// the others hear of it at the next presence tick.
    func closed(_ session: Session, _ reason: LongLinkServer<ChatCodec>.CloseReason) {
        assertOnQueue()
        let phase = sessions.remove(session)?.phase ?? .awaitingLogin
        metrics.connections[session.transport]?.decrement()
        if reason == .idleTimeout { metrics.sessionsEvictedIdle.increment() }
        var why = Router.describe(reason)
        if case .closing(let closingReason, _) = phase { why = closingReason }
        for line in limiting.offences.close(source: "session \(session.id)", now: limiting.clock()) { logger.notice("\(line)") }
        if case .replaced(let name) = phase {
            logger.debug("closed the replaced session of \(name) from \(Router.address(of: session)) (\(why))")
            return
        }
        guard let name = phase.name else {
            if reason != .byClient && reason != .shuttingDown { droppedBeforeLogin(session, reason) }
            return
        }
        guard users[name]?.session === session else { return }
        sessions.logOut(name)
        guard shutdown == nil else { return }  // the shutdown's summary line counts them
        if reason == .byClient {
            logger.info("logout \(name) (\(reason))")
        } else {
            logger.info("drop \(name) (\(why))")
        }
        cluster?.announceLogout(name)
        sendPresence(of: name, online: false)
    }

    func hold(_ message: ChatMessage, from session: Session) {
        guard sessions.hold(message, from: session) else {
            logger.warning("drop \(Router.address(of: session)) (over \(Router.maxHeldMessages) messages during its login)")
            session.close()
            return
        }
    }
}
