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
/// What a session sends while its login waits is held (in its ``SessionPhase``) and handled after it, in order, as
/// while a password is checked; so are the acknowledgements of its heartbeats while it waits its turn
/// (one pass or a few), which must follow the replies to what was sent before them. Not while its
/// password is checked: that may take seconds on a busy server, and a client whose heartbeats go
/// unanswered that long drops the connection and tries again, with another check (a livelock).
extension Router {
    /// The most logins handled in one pass of the routing queue: 4.
    static let loginsPerPass = 4

    /// Logins waiting their turn, and where passwords are checked.
    struct Logins {
        /// Sessions whose login waits its turn (phase `loginQueued`), in arrival order.
        var pending: [any ChatPeer] = []
        /// Where the logins not yet taken start in ``pending``.
        var start = 0
        /// Whether a pass is queued.
        var passScheduled = false
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

        /// Takes the next ``Router/loginsPerPass`` sessions from the front (by index: removing from the
        /// front of the array each pass copied the whole queue while a slice of it was alive, quadratic
        /// in a crowd of 10,000).
        mutating func takeBatch() -> [any ChatPeer] {
            let end = min(start + Router.loginsPerPass, pending.count)
            let batch = Array(pending[start..<end])
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

    /// Queues the login `message` of `session`; what the session sends meanwhile is held, and its
    /// heartbeats' acknowledgements with it.
    func queueLogin(_ message: ChatMessage, from session: Session) {
        sessions.set(.loginQueued(login: message, held: []), of: session)
        session.holdHeartbeatAcknowledgements()
        logins.pending.append(session)
        scheduleLoginPass()
    }

    private func scheduleLoginPass() {
        guard !logins.passScheduled, logins.start < logins.pending.count else { return }
        logins.passScheduled = true
        queue.async { [self] in loginPass() }
    }

    /// Handles up to ``loginsPerPass`` queued logins (skipping those whose session closed meanwhile),
    /// each followed by what its session sent while it waited; queues the next pass.
    private func loginPass() {
        assertOnQueue()
        logins.passScheduled = false
        for session in logins.takeBatch() {
            guard case .loginQueued(let login, let waiting) = sessions.phase(of: session) else { continue }  // closed meanwhile
            sessions.set(.awaitingLogin, of: session)
            handle(login, from: session)
            if case .checkingPassword(let attempt, let heldSince) = sessions.phase(of: session) {
                // Its password is being checked: what it sent waits on, before what comes next.
                sessions.set(.checkingPassword(attempt, held: waiting + heldSince), of: session)
            } else {
                replay(waiting, from: session)
            }
        }
        scheduleLoginPass()
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
