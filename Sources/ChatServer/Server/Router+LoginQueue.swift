import ChatProtocol
import Dispatch
import LongLink

/// Logins wait their turn (issue 12 §1, "a crowd stalls everyone"): a login costs the routing queue
/// far more than a chat message (the name's checks, the store, the reply with up to 100 names, the
/// presence), and the queue is first come, first served. So a login is not handled when it arrives:
/// it joins ``Logins/pending``, and the queue handles at most ``loginsPerPass`` of them per pass, each
/// pass queued behind what arrived meanwhile. 2,000 logins arriving at once then delay a direct
/// message between two users already online by one pass, not by all 2,000.
///
/// A login's store calls (its user's record, and a stored session's delivery window) are made off the
/// routing queue too (Router+LoginReads), at most ``maxLoginStoreWork`` at once: a pass takes no more
/// logins than that leaves room for. On a cluster each call is a JetStream round trip, and a node that
/// made them one after another on the routing queue logged in about 30 users a second after another
/// node died (issue 35 §3). A login arriving when the oldest login waiting has waited more than half
/// the login deadline is refused at once with `serverBusy` and a `retryAfter` (the backlog at the rate
/// logins are being answered), rather than left to time out (``busyRefusal(now:)``).
///
/// What a session sends while its login waits is held (in its ``SessionPhase``) and handled after it, in order, as
/// while a password is checked; so are the acknowledgements of its heartbeats while it waits its turn
/// (one pass or a few), which must follow the replies to what was sent before them. Not while its
/// password is checked: that may take seconds on a busy server, and a client whose heartbeats go
/// unanswered that long drops the connection and tries again, with another check (a livelock).
extension Router {
    /// The most logins handled in one pass of the routing queue: 4.
    static let loginsPerPass = 4

    /// The most store calls of logins under way at once, off the routing queue: 16 (each a JetStream
    /// round trip of a few hundred microseconds on a cluster, so 16 at once keep one node answering
    /// thousands of logins a second; the calls of one login run one after another).
    static let maxLoginStoreWork = 16

    /// A login waiting its turn: its session, when it arrived (the router's clock, ns), and how many
    /// logins had been answered by then (``Logins/answered``).
    struct PendingLogin {
        let session: any ChatPeer
        let arrived: UInt64
        let answeredBefore: UInt64
    }

    /// Logins waiting their turn, and where passwords are checked.
    struct Logins {
        /// Sessions whose login waits its turn (phase `loginQueued`), in arrival order.
        var pending: [PendingLogin] = []
        /// Where the logins not yet taken start in ``pending``.
        var start = 0
        /// Whether a pass is queued.
        var passScheduled = false
        /// Logins whose user's record has been read (or that needed none) since the server started:
        /// how fast the queue moves.
        var answered: UInt64 = 0
        /// Where a login's store calls run (Router+LoginReads): ``Router/maxLoginStoreWork`` serial
        /// queues, one store call on each at a time. (Not one concurrent queue: on Linux, Dispatch runs a
        /// concurrent queue's blocks on about one thread per core, and adds a thread about once a second
        /// while they block, so 16 blocking round trips ran two at a time.)
        let storeLanes = (1...Router.maxLoginStoreWork).map { DispatchQueue(label: "IMChat.ChatServer.login-store-\($0)") }
        /// The indices of the ``storeLanes`` with no call under way.
        var freeLanes = Array(0..<Router.maxLoginStoreWork)
        /// Store work waiting for a lane (a stored session's read after its password check, when new
        /// logins took every lane), first come first served: started on the next lane that frees up.
        var laneWaiters: [(Int) -> Void] = []
        /// Store calls of logins under way off the routing queue (at most ``Router/maxLoginStoreWork``).
        var storeWork: Int { storeLanes.count - freeLanes.count }
        /// How many more logins a pass may start: the free lanes not promised to waiting work.
        var laneRoom: Int { max(freeLanes.count - laneWaiters.count, 0) }
        /// What was stored for the sessions whose delivery window is being read, by session id
        /// (Router+LoginReads).
        var windowNotes: [Int: WindowNotes] = [:]
        let hasher: PasswordHasher
        var throttle: LoginThrottle
        /// Where passwords are hashed and checked (tens of milliseconds and 64 MiB each with the default
        /// limits): never on the routing queue; at most two at once, one on each of two serial queues
        /// taken in turn (no thread waits for a slot: a semaphore there held a Dispatch worker thread per
        /// login waiting, which a crowd of logins took from every other queue of the process).
        let hashing = [DispatchQueue(label: "IMChat.ChatServer.passwords-1"), DispatchQueue(label: "IMChat.ChatServer.passwords-2")]
        /// Which of ``hashing`` the next check goes to.
        var nextHashing = 0

        init(hasher: PasswordHasher, throttle: LoginThrottle) {
            self.hasher = hasher
            self.throttle = throttle
        }

        /// Logins waiting their turn.
        var backlog: Int { pending.count - start }

        /// Takes the next `limit` sessions at most from the front (by index: removing from the front of
        /// the array each pass copied the whole queue while a slice of it was alive, quadratic in a
        /// crowd of 10,000).
        mutating func takeBatch(_ limit: Int) -> [any ChatPeer] {
            let end = min(start + max(limit, 0), pending.count)
            let batch = pending[start..<end].map(\.session)
            start = end
            if start == pending.count {
                pending.removeAll(keepingCapacity: true)
                start = 0
            } else if start >= 1_024, start * 2 >= pending.count {
                pending.removeFirst(start)
                start = 0
            }
            return batch
        }

        /// Seconds the oldest login waiting has waited at `now` (ns); nil when none waits.
        func oldestWait(now: UInt64) -> Double? {
            guard start < pending.count else { return nil }
            return Double(now &- min(pending[start].arrived, now)) / 1e9
        }

        /// Seconds a login arriving at `now` (ns) can expect to wait for its turn: the logins waiting,
        /// at the rate logins were answered while the oldest of them waited (those answered since it
        /// arrived, at least one, over its wait). Nil when none waits.
        func expectedWait(now: UInt64) -> Double? {
            guard let waited = oldestWait(now: now) else { return nil }
            let answeredSince = max(answered &- pending[start].answeredBefore, 1)
            return Double(backlog) * waited / Double(answeredSince)
        }

        /// The queue the next password check goes to.
        mutating func nextHashingQueue() -> DispatchQueue {
            nextHashing = (nextHashing + 1) % hashing.count
            return hashing[nextHashing]
        }
    }

    /// True when `message` from `session` is a login to queue: a login (either version) of a session
    /// awaiting its login.
    func isLoginToQueue(_ message: ChatMessage, from session: Session) -> Bool {
        guard case .awaitingLogin = sessions.phase(of: session) else { return false }
        switch message {
        case .login, .v2(.login): return true
        default: return false
        }
    }

    /// The most seconds a `serverBusy` asks a client to wait: 60.
    static let maxBusyRetryAfter: UInt64 = 60

    /// The `retryAfter` (whole seconds, 1 to ``maxBusyRetryAfter``: the ``Logins/expectedWait(now:)``)
    /// to refuse a login arriving at `now` with, when the oldest login waiting has waited more than half
    /// the login deadline (logins are answered in arrival order, so the queue is that long in time);
    /// nil when it may wait its turn. (Not the expected wait alone: a store that answers nothing for a
    /// second or two makes that estimate soar while the queue is short.)
    func busyRefusal(now: UInt64) -> UInt64? {
        let deadline = limits.loginTimeout.components
        let half = (Double(deadline.seconds) + Double(deadline.attoseconds) / 1e18) / 2
        guard let waited = logins.oldestWait(now: now), waited > half, let wait = logins.expectedWait(now: now) else { return nil }
        return UInt64(min(max(wait.rounded(.up), 1), Double(Router.maxBusyRetryAfter)))
    }

    /// Queues the login `message` of `session`; what the session sends meanwhile is held, and its
    /// heartbeats' acknowledgements with it. Refused with `serverBusy` (version 1: `serverFull`)
    /// instead when the queue is too long (``busyRefusal(now:)``): the session stays open, awaiting its
    /// login under its deadline, and its client reconnects after `retryAfter`. (Not closed by the
    /// server: the client's messages behind its login would then be unread, the close a reset, and a
    /// reset may discard the refusal before the client reads it.)
    func queueLogin(_ message: ChatMessage, from session: Session) {
        let now = limiting.clock()
        if let retryAfter = busyRefusal(now: now) {
            let name: String
            switch message {
            case .login(let typed, _), .v2(.login(let typed, _, _, _, _, _)): name = typed
            default: name = "?"
            }
            let backlog = logins.backlog
            let code: ChatErrorCode = message.version == .v1 ? .serverFull : .serverBusy
            refuseLogin(
                name, session, version: message.version, code,
                "\(backlog) logins are waiting; try again in \(retryAfter) s",
                reason: "server busy: \(backlog) logins waiting", retryAfter: retryAfter)
            return
        }
        sessions.set(.loginQueued(login: message, held: []), of: session)
        session.holdHeartbeatAcknowledgements()
        logins.pending.append(PendingLogin(session: session, arrived: now, answeredBefore: logins.answered))
        scheduleLoginPass()
    }

    /// Queues a pass when logins wait and the store has room for more of them.
    func scheduleLoginPass() {
        guard !logins.passScheduled, logins.start < logins.pending.count, logins.laneRoom > 0 else { return }
        logins.passScheduled = true
        queue.async { [self] in loginPass() }
    }

    /// Starts up to ``loginsPerPass`` queued logins (skipping those whose session closed meanwhile), no
    /// more than the store has room for; queues the next pass.
    private func loginPass() {
        assertOnQueue()
        logins.passScheduled = false
        for session in logins.takeBatch(min(Router.loginsPerPass, logins.laneRoom)) {
            guard case .loginQueued(let login, _) = sessions.phase(of: session) else { continue }  // closed meanwhile
            startLogin(login, from: session)
        }
        scheduleLoginPass()
    }

    /// Goes on with the login of `session`, whose phase is `loginQueued` (what it sent meanwhile is
    /// held there, as while its user's record is read): `step` handles it, then what the session sent
    /// while it waited is handled in order, unless its password is being checked now.
    func resumeLogin(of session: Session, _ step: () -> Void) {
        guard case .loginQueued(_, let waiting) = sessions.phase(of: session) else { return }
        sessions.set(.awaitingLogin, of: session)
        step()
        if case .checkingPassword(let attempt, let heldSince) = sessions.phase(of: session) {
            // Its password is being checked: what it sent waits on, before what comes next.
            sessions.set(.checkingPassword(attempt, held: waiting + heldSince), of: session)
        } else {
            replay(waiting, from: session)
        }
    }

    /// Handles `waiting`, the messages `session` sent while they were held, in order, then lets its
    /// heartbeats' acknowledgements go (unless handling them held the session again).
    func replay(_ waiting: [ChatMessage], from session: Session) {
        for message in waiting {
            if sessions.isHolding(session) {
                hold(message, from: session)
            } else {
                handle(message, from: session)
            }
        }
        if !sessions.isHolding(session) { session.releaseHeartbeatAcknowledgements() }
    }
}
