import ChatProtocol
import LongLink

/// Logins wait their turn (issue 12 §1, "a crowd stalls everyone"): a login costs the routing queue
/// far more than a chat message (the name's checks, the store, the reply with up to 100 names, the
/// presence), and the queue is first come, first served. So a login is not handled when it arrives:
/// it joins ``pendingLogins``, and the queue handles at most ``loginsPerPass`` of them per pass, each
/// pass queued behind what arrived meanwhile. 2,000 logins arriving at once then delay a direct
/// message between two users already online by one pass, not by all 2,000.
///
/// What a session sends while its login waits is held (``held``) and handled after it, in order, as
/// while a password is checked; so are the acknowledgements of its heartbeats while it waits its turn
/// (one pass or a few), which must follow the replies to what was sent before them. Not while its
/// password is checked: that may take seconds on a busy server, and a client whose heartbeats go
/// unanswered that long drops the connection and tries again, with another check (a livelock).
extension Router {
    /// The most logins handled in one pass of the routing queue: 4.
    static let loginsPerPass = 4

    /// True when `message` from `session` is a login to queue: a login (either version) of a session
    /// not logged in and not waiting already.
    func isLoginToQueue(_ message: ChatMessage, from session: Session) -> Bool {
        guard name(of: session) == nil, held[session.id] == nil else { return false }
        switch message {
        case .login, .v2(.login): return true
        default: return false
        }
    }

    /// Queues the login `message` of `session`; what the session sends meanwhile is held.
    func queueLogin(_ message: ChatMessage, from session: Session) {
        hold(session)
        pendingLogins.append((message, session))
        scheduleLoginPass()
    }

    private func scheduleLoginPass() {
        guard !loginPassScheduled, pendingLoginsStart < pendingLogins.count else { return }
        loginPassScheduled = true
        queue.async { [self] in loginPass() }
    }

    /// Handles up to ``loginsPerPass`` queued logins (skipping those whose session closed meanwhile),
    /// each followed by what its session sent while it waited; queues the next pass.
    private func loginPass() {
        loginPassScheduled = false
        // Taken from the front by index (removing from the front of the array each pass copied the
        // whole queue while a slice of it was alive: quadratic in a crowd of 10,000).
        let end = min(pendingLoginsStart + Router.loginsPerPass, pendingLogins.count)
        let batch = Array(pendingLogins[pendingLoginsStart..<end])
        pendingLoginsStart = end
        if pendingLoginsStart == pendingLogins.count {
            pendingLogins.removeAll(keepingCapacity: true)
            pendingLoginsStart = 0
        } else if pendingLoginsStart >= 1_024, pendingLoginsStart * 2 >= pendingLogins.count {
            pendingLogins.removeFirst(pendingLoginsStart)
            pendingLoginsStart = 0
        }
        for (message, session) in batch {
            guard let waiting = held.removeValue(forKey: session.id) else { continue }  // closed meanwhile
            handle(message, from: session)
            if held[session.id] != nil {
                // Its password is being checked: what it sent waits on, before what comes next.
                held[session.id] = waiting + (held[session.id] ?? [])
            } else {
                replay(waiting, from: session)
            }
        }
        scheduleLoginPass()
    }

    /// From now on `session`'s messages are held (``held``), and (with `heartbeats`) its heartbeats'
    /// acknowledgements with them, until ``replay(_:from:)``.
    func hold(_ session: Session, heartbeats: Bool = true) {
        held[session.id] = []
        if heartbeats { session.holdHeartbeatAcknowledgements() }
    }

    /// Handles `waiting`, the messages `session` sent while they were held, in order, then lets its
    /// heartbeats' acknowledgements go (unless handling them held the session again).
    func replay(_ waiting: [ChatMessage], from session: Session) {
        for message in waiting {
            if held[session.id] != nil {
                hold(message, from: session)
            } else {
                handle(message, from: session)
            }
        }
        if held[session.id] == nil { session.releaseHeartbeatAcknowledgements() }
    }
}
