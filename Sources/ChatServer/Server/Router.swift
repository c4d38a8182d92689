import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketLog

/// Who is logged in, and what to do with each message (internal for tests). Unchecked: used on the
/// server's queue only (`link` is set once, before the server starts).
///
/// Every direct message and broadcast, from clients of either version, is appended to its
/// conversation's log in the ``MessageStore`` before it goes anywhere (``Router+Delivery``): stored
/// sessions (version 2, logged in with a password) get it through their ``DeliveryWindow`` with its
/// sequence number; live-only sessions (version 1, or version 2 without a password) get it at once,
/// without one, if they are online.
final class Router: @unchecked Sendable {
    typealias Session = LongLinkServer<ChatCodec>.Session

    struct User {
        let session: Session
        let resumeToken: String
        let version: ChatProtocolVersion
        /// The client instance of a version 2 login (the de-duplication key with the message ids).
        let clientInstance: String
        /// Delivery state of a stored session (version 2 with a password); nil for live-only sessions.
        var window: DeliveryWindow?
        /// Version 2 login with `presenceChanges`: one `presenceChanges` per presence tick instead of
        /// single `presence` messages (Router+Presence).
        var presenceChanges = false
        /// The presence event its login reply reflects (``PresenceBoard/event``): changes up to it are
        /// not announced to it again.
        var presenceSeen: UInt64 = 0
    }

    /// The operator's log (``ChatServer``'s logger): logins, logouts and drops at `info`, refused logins
    /// at `notice`, clients' protocol errors at `warning`, store failures at `error`.
    let logger: Logger
    weak var link: LongLinkServer<ChatCodec>?
    let queue: DispatchQueue
    let store: any MessageStore
    let hasher: PasswordHasher
    var throttle: LoginThrottle
    /// Where passwords are hashed and checked (tens of milliseconds and 64 MiB each with the default
    /// limits): never on the routing queue; at most two at once, one on each of two serial queues taken
    /// in turn (no thread waits for a slot: a semaphore there held a Dispatch worker thread per login
    /// waiting, which a crowd of logins took from every other queue of the process).
    let hashing = [DispatchQueue(label: "IMChat.ChatServer.passwords-1"), DispatchQueue(label: "IMChat.ChatServer.passwords-2")]
    /// Which of ``hashing`` the next check goes to.
    var nextHashing = 0
    var users: [String: User] = [:]
    /// The names of ``users`` by key, to refuse a login too similar to a name online (Router+Names).
    var onlineNames = NameIndex()
    /// Names the store is known to hold (users are never removed), so a message to one of them needs no
    /// lookup in the store.
    var knownUsers: Set<String> = []
    /// Messages of sessions whose login waits its turn (Router+LoginQueue) or whose version 2 login is
    /// being checked (password hashing runs off the queue), by session id, handled in order once it is
    /// decided. At most ``maxHeldMessages`` each.
    var held: [Int: [ChatMessage]] = [:]
    /// Logins waiting their turn, in arrival order (Router+LoginQueue), and whether a pass is queued.
    var pendingLogins: [(ChatMessage, Session)] = []
    /// Where the logins not yet taken start in ``pendingLogins``.
    var pendingLoginsStart = 0
    var loginPassScheduled = false
    /// Messages waiting for the next group commit, and acknowledged positions waiting to be saved.
    var pendingMessages: [PendingMessage] = []
    var pendingPositions: [(user: String, conversation: ConversationID, sequence: UInt64)] = []
    var flushScheduled = false
    /// Who is online (sorted) and who came or went since the last presence tick (Router+Presence).
    var presence = PresenceBoard()
    /// How long changes are gathered before they are announced; nil: only when ``presenceTick()`` is
    /// called (tests). Set by ``ChatServer`` before it starts.
    var presenceInterval: Duration? = ChatServer.defaultPresenceInterval
    var presenceTickScheduled = false
    /// Numbers version 1 messages, which carry no id, for the store's de-duplication key.
    var nextV1MessageID: UInt64 = 1
    /// Distinguishes this process's version 1 messages from another run's in the store.
    let v1Instance = "v1-" + UUID().uuidString.lowercased()
    /// The limits on one connection (Router+Limits).
    let limits: ChatServer.Limits
    /// Monotonic time in nanoseconds (the event loops' clock, virtual in tests): for the rate limits and
    /// the log's repeat windows.
    let clock: @Sendable () -> UInt64
    /// Each open connection's message rate, by session id.
    var paces: [Int: Router.Pace] = [:]
    /// Sessions the router is closing for a limit, with the reason for the log line of their close.
    var closing: [Int: String] = [:]
    /// Refusals logged once per offender.
    var offences = RepeatLog()
    var offenceSummaryScheduled = false
    /// Set by ``beginShutdown()``: messages are no longer taken.
    var shuttingDown = false
    /// Direct messages and broadcasts that arrived after the shutdown began (not acknowledged).
    var lateMessages = 0
    /// The other nodes, in cluster mode (``ChatCluster``); nil on a server of its own. Set before the
    /// server starts.
    var cluster: ClusterLink?

    /// Most messages kept from a session while its login is being checked; more close the connection.
    static let maxHeldMessages = 1_000

    init(
        store: any MessageStore, hasher: PasswordHasher, throttle: LoginThrottle, queue: DispatchQueue,
        limits: ChatServer.Limits = ChatServer.Limits(), clock: @escaping @Sendable () -> UInt64,
        logger: Logger
    ) {
        self.store = store
        self.hasher = hasher
        self.throttle = throttle
        self.queue = queue
        self.limits = limits
        self.clock = clock
        self.logger = logger
    }

    func name(of session: Session) -> String? { session.context as? String }

    /// The context of a session whose user logged in again over another connection: it is being
    /// closed, and its close is not the user's logout.
    struct ReplacedSession: Sendable { let name: String }

    /// `host:port` of the session's peer, for log lines about sessions not (yet) logged in.
    static func address(of session: Session) -> String { session.remoteAddress?.description ?? "?" }

    /// Answers a refused login with `code` and `detail` in `version` and logs one line with the reason
    /// the operator reads (`refused login NAME from ADDRESS (REASON)`).
    func refuseLogin(
        _ name: String, _ session: Session, version: ChatProtocolVersion, _ code: ChatErrorCode, _ detail: String,
        reason: String, retryAfter: UInt64? = nil
    ) {
        logger.notice("refused login \(name) from \(Router.address(of: session)) (\(reason))")
        session.send(Router.error(code, detail, id: nil, version: version, retryAfter: retryAfter))
    }

    func handle(_ event: LongLinkServer<ChatCodec>.Event) {
        switch event {
        case .opened(let session):
            paces[session.id] = Pace(bucket: TokenBucket(rate: limits.messageRate, burst: limits.messageBurst))
        case .received(let message, let session):
            guard !shuttingDown else {
                arrivedLate(message)
                return
            }
            guard withinRate(message, from: session) else { return }
            if held[session.id] != nil {
                hold(message, from: session)
            } else if isLoginToQueue(message, from: session) {
                queueLogin(message, from: session)
            } else {
                handle(message, from: session)
            }
        case .closed(let session, let reason):
            held[session.id] = nil
            let why = closing[session.id] ?? Router.describe(reason)
            forgetLimits(of: session)
            if let replaced = session.context as? ReplacedSession {
                logger.debug("closed the replaced session of \(replaced.name) from \(Router.address(of: session)) (\(why))")
                return
            }
            guard let name = name(of: session) else {
                if reason != .byClient && reason != .shuttingDown { droppedBeforeLogin(session, reason) }
                return
            }
            guard users[name]?.session === session else { return }
            users[name] = nil
            onlineNames.remove(name, key: UserName.Key(name))
            guard !shuttingDown else { return }  // the shutdown's summary line counts them
            if reason == .byClient {
                logger.info("logout \(name) (\(reason))")
            } else {
                logger.info("drop \(name) (\(why))")
            }
            cluster?.announceLogout(name)
            sendPresence(of: name, online: false)
        case .refused(let address, let refusal):
            refused(address, refusal)
        case .sendFailed(let message, let reason, let sessions):
            unsendable(message, reason: reason, to: sessions)
        }
    }

    func hold(_ message: ChatMessage, from session: Session) {
        guard let count = held[session.id]?.count, count < Router.maxHeldMessages else {
            logger.warning("drop \(Router.address(of: session)) (over \(Router.maxHeldMessages) messages during its login)")
            session.close()
            return
        }
        held[session.id]?.append(message)
    }

    func handle(_ message: ChatMessage, from session: Session) {
        // One version per connection, the one its login used (heartbeats are answered in their own).
        if let name = name(of: session), let version = users[name]?.version, message.version != version,
            message != .heartbeat, message != .v2(.heartbeat)
        {
            logger.warning(
                "drop \(name) (protocol error: a version \(message.version.rawValue) message on a version \(version.rawValue) connection)")
            session.close()
            return
        }
        switch message {
        case .v2(let message):
            handle(message, from: session)
        case .login(let name, let token):
            loginV1(name, token: token, session: session)
        case .directMessage(let typed, let text):
            guard let sender = loggedIn(session, version: .v1, id: nil) else { return }
            let recipient = registeredName(of: typed)
            submit(.init(between: sender, and: recipient), recipient: recipient, text: text, from: sender, id: nil, session: session)
        case .broadcast(let text):
            guard let sender = loggedIn(session, version: .v1, id: nil) else { return }
            submit(.room, recipient: nil, text: text, from: sender, id: nil, session: session)
        case .heartbeat:
            break  // answered by the link layer
        case .loginAccepted, .delivery, .presence, .heartbeatAck, .error:
            session.send(.error(code: .badRequest, detail: "only the server sends \(message.functionCode)"))
        }
    }

    func handle(_ message: ChatMessageV2, from session: Session) {
        switch message {
        case .login(let name, let password, let token, let instance, let positions, let presenceChanges):
            loginV2(
                name, password: password, token: token, instance: instance, positions: positions,
                presenceChanges: presenceChanges, session: session)
        case .directMessage(let id, let typed, let text):
            guard let sender = loggedIn(session, version: .v2, id: id) else { return }
            let recipient = registeredName(of: typed)
            submit(.init(between: sender, and: recipient), recipient: recipient, text: text, from: sender, id: id, session: session)
        case .broadcast(let id, let text):
            guard let sender = loggedIn(session, version: .v2, id: id) else { return }
            submit(.room, recipient: nil, text: text, from: sender, id: id, session: session)
        case .received(let conversation, let upTo):
            guard let name = loggedIn(session, version: .v2, id: nil) else { return }
            acknowledge(conversation, upTo: upTo, by: name)
        case .historyRequest(let conversation, let limit):
            guard let name = loggedIn(session, version: .v2, id: nil) else { return }
            sendHistory(of: conversation, limit: limit, to: name)
        case .who(let after, let limit):
            guard loggedIn(session, version: .v2, id: nil) != nil else { return }
            answerWho(after: after, limit: limit, session: session)
        case .heartbeat:
            break
        case .loginAccepted, .delivery, .presence, .heartbeatAck, .stored, .receipt, .history, .onlineUsers, .presenceChanges, .error:
            session.send(.v2(.error(code: .badRequest, detail: "only the server sends \(message.functionCode)", id: nil, retryAfter: nil)))
        }
    }

    /// The name `session` is logged in as, or nil after answering `notLoggedIn` in `version`.
    func loggedIn(_ session: Session, version: ChatProtocolVersion, id: UInt64?) -> String? {
        if let name = name(of: session) { return name }
        session.send(Router.error(.notLoggedIn, "log in first", id: id, version: version))
        return nil
    }

    /// An error in `version`; `id` names the numbered message it answers (version 2 only).
    static func error(
        _ code: ChatErrorCode, _ detail: String, id: UInt64?, version: ChatProtocolVersion, retryAfter: UInt64? = nil
    ) -> ChatMessage {
        version == .v1 ? .error(code: code, detail: detail) : .v2(.error(code: code, detail: detail, id: id, retryAfter: retryAfter))
    }

    func loginV1(_ name: String, token: String?, session: Session) {
        guard self.name(of: session) == nil else {
            refuseLogin(
                name, session, version: .v1, .alreadyLoggedIn, "this connection is logged in already",
                reason: "a second login on one connection")
            return
        }
        if let refusal = Router.invalidNameDetail(name) {
            refuseLogin(name, session, version: .v1, .invalidName, refusal, reason: "invalid name: \(refusal)")
            return
        }
        do {
            let record = try store.user(named: name)
            if let detail = Router.similarNameDetail(name, record) {
                refuseLogin(name, session, version: .v1, .nameTaken, detail, reason: detail)
                return
            }
            if record?.passwordHash != nil {
                refuseLogin(
                    name, session, version: .v1, .nameTaken,
                    "\(name) is claimed with a password (log in with protocol version 2)",
                    reason: "version 1 login to a name claimed with a password")
                return
            }
            // A user exists once it has logged in once: messages to it are kept from then on.
            if record == nil { _ = try store.createUser(named: name, passwordHash: nil, at: Date()) }
        } catch {
            logger.error("store error reading user \(name): \(error)")
            session.send(.error(code: .nameTaken, detail: "\(name) cannot be checked now"))
            return
        }
        admit(name, token: token, version: .v1, instance: v1Instance, window: nil, session: session)
    }

    /// The name is valid and its password (if any) checked: takes it over from an older session when
    /// the login carries that session's resume token or the name's password (the older session gets
    /// `replaced` and is closed), answers `login accepted` (the first ``ChatServer/maxOnlineListed``
    /// others from the sorted roster) and tells the others at the next presence tick.
    /// `presenceChanges`: the session asked for `presenceChanges` batches. Returns false when the name
    /// is taken (answered `nameTaken`).
    @discardableResult
    func admit(
        _ name: String, token: String?, version: ChatProtocolVersion, instance: String, window: DeliveryWindow?,
        presenceChanges: Bool = false, session: Session
    ) -> Bool {
        guard !shuttingDown else { return false }
        let address = Router.address(of: session)
        let key = UserName.Key(name)
        if users[name] == nil, let other = onlineNames.similar(to: key) {
            refuseLogin(
                name, session, version: version, .nameTaken, Router.similarOnlineDetail(name, other),
                reason: "too similar to \(other), who is logged in")
            return false
        }
        if users[name] == nil, let cluster, let elsewhere = cluster.remote[name] {
            // Online on another node: taken over there exactly as here (resume token or password).
            guard window != nil || token.map(ClusterLink.hash) == elsewhere.token else {
                refuseLogin(
                    name, session, version: version, .nameTaken, "\(name) is already logged in",
                    reason: "already logged in on node \(elsewhere.node)")
                return false
            }
            cluster.replace(name, on: elsewhere.node)
            logger.info("login \(name) from \(address) (replaced its session on node \(elsewhere.node))")
        } else if let existing = users[name] {
            // The resume token, or the password (a stored session), proves it is the same user.
            guard window != nil || token == existing.resumeToken else {
                refuseLogin(
                    name, session, version: version, .nameTaken, "\(name) is already logged in",
                    reason: "already logged in from \(Router.address(of: existing.session))")
                return false
            }
            // The same client again, over a new connection: its old session is stale.
            existing.session.context = ReplacedSession(name: name)
            existing.session.send(Router.error(.replaced, "logged in again from another connection", id: nil, version: existing.version))
            existing.session.close()
            logger.info("login \(name) from \(address) (replaced its session from \(Router.address(of: existing.session)))")
        } else {
            logger.info("login \(name) from \(address)")
        }
        let resumeToken = token ?? UUID().uuidString
        session.context = name
        session.admit()  // the login deadline no longer applies
        let isNew = users[name] == nil && !presence.contains(name)
        users[name] = User(
            session: session, resumeToken: resumeToken, version: version, clientInstance: instance, window: window,
            presenceChanges: presenceChanges)
        let listed = presence.first(ChatServer.maxOnlineListed, excluding: name)
        let count = cluster == nil ? users.count - 1 : presence.count - (presence.contains(name) ? 1 : 0)
        switch version {
        case .v1:
            session.send(.loginAccepted(name: name, online: listed, onlineCount: count, resumeToken: resumeToken))
        case .v2:
            session.send(
                .v2(
                    .loginAccepted(
                        name: name, online: listed, onlineCount: count, resumeToken: resumeToken,
                        stored: window != nil)))
        }
        onlineNames.insert(name, key: key)
        if isNew { sendPresence(of: name, online: true) }
        cluster?.announceLogin(name, resumeToken: resumeToken)
        users[name]?.presenceSeen = presence.event
        return true
    }
}
