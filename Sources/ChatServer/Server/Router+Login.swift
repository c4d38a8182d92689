import ChatProtocol
import ChatSQLite
import Dispatch
import Foundation
import LongLink
import SocketLog

/// Version 2 logins: names claimed with a password, checked off the routing queue, throttled per name
/// and per address; a stored session's delivery window starts where its client says it is.
extension Router {
    /// What checking (or claiming) a password came to: `verified` carries the user's record as read
    /// before the check.
    enum PasswordOutcome: Sendable {
        case verified(UserRecord)
        case claimed(hash: String)
        case wrong
        case failed
    }

    /// Decides a version 2 login with its user's `record` as read from the store (Router+LoginReads).
    func loginV2(
        _ name: String, password: String?, token: String?, instance: String, positions: [String: UInt64],
        presenceChanges: Bool = false, record lookup: Result<UserRecord?, any Error>, session: Session
    ) {
        if let refusal = Router.invalidNameDetail(name) {
            refuseLogin(name, session, version: .v2, .invalidName, refusal, reason: "invalid name: \(refusal)")
            return
        }
        let address = session.remoteAddress?.host ?? "?"
        let record: UserRecord?
        switch lookup {
        case .success(let found): record = found
        case .failure(let error):
            logger.error("store error reading user \(name): \(error)")
            refuseV2Login(.storeUnavailable, "the message store failed; try again later", session)
            return
        }
        if let detail = Router.similarNameDetail(name, record) {
            refuseLogin(name, session, version: .v2, .nameTaken, detail, reason: detail)
            return
        }
        guard let password else {
            if record?.passwordHash != nil {
                logger.notice("refused login \(name) from \(address) (no password for a claimed name)")
                refuseV2Login(.badPassword, "\(name) is claimed: log in with its password", session)
                return
            }
            // Live only, as in version 1.
            guard createIfNew(name, record: record, hash: nil, session: session) else { return }
            admit(
                name, token: token, version: .v2, instance: instance, window: nil, presenceChanges: presenceChanges,
                session: session)
            return
        }
        if case .refused(let wait, let subject) = logins.throttle.check(name: name, address: address, now: .now) {
            let seconds = UInt64(max(1, (Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
            logger.notice(
                "refused login \(name) from \(address) (throttled: too many wrong passwords for this \(subject == .name ? "name" : "address"))"
            )
            refuseV2Login(.throttled, "too many wrong passwords; try again in \(seconds) s", session, retryAfter: seconds)
            return
        }
        // Hashing takes tens of milliseconds: off the queue; what the session sends meanwhile waits
        // (its heartbeats are answered: the server is alive, however long the check queues).
        let attempt = LoginAttempt(
            name: name, password: password, token: token, instance: instance, positions: positions,
            presenceChanges: presenceChanges)
        sessions.set(.checkingPassword(attempt, held: []), of: session)
        session.releaseHeartbeatAcknowledgements()  // those held while the login waited its turn
        session.admit()  // the login deadline waits for the check, which may queue behind others
        checkPassword(attempt, against: record, session: session)
    }

    /// Checks `password` against the hash in `record` (or hashes it to claim the name when it has none)
    /// on a hashing queue, then goes on with the login on the routing queue (``passwordChecked(_:session:)``).
    /// `session` is held meanwhile.
    func checkPassword(_ attempt: LoginAttempt, against record: UserRecord?, session: Session) {
        let hasher = logins.hasher
        let password = attempt.password
        logins.nextHashingQueue().async { [self] in
            // Gone meanwhile (gave up waiting, say): no hash for nobody. Checks queued behind a crowd
            // of clients that reconnect on a timeout would otherwise grow faster than they are done.
            guard session.isConnected else { return }
            let outcome: PasswordOutcome
            if let record, let existingHash = record.passwordHash {
                outcome = hasher.verify(password, against: existingHash) ? .verified(record) : .wrong
            } else if let hash = try? hasher.hash(password) {
                outcome = .claimed(hash: hash)
            } else {
                outcome = .failed
            }
            queue.async { [self] in passwordChecked(outcome, session: session) }
        }
    }

    /// The password of `session`'s login is checked: a wrong one is refused (and counted by the
    /// throttle); a right one, or a claim, goes on to the store (Router+LoginReads), the session still
    /// held in phase `checkingPassword`.
    private func passwordChecked(_ outcome: PasswordOutcome, session: Session) {
        assertOnQueue()
        // Gone (or being closed) while its password was checked: nothing to answer.
        guard case .checkingPassword(let attempt, _) = sessions.phase(of: session) else { return }
        let name = attempt.name
        let address = session.remoteAddress?.host ?? "?"
        switch outcome {
        case .wrong:
            logins.throttle.recordFailure(name: name, address: address, now: .now)
            logger.notice("refused login \(name) from \(address) (wrong password)")
            endLogin(of: session) { refuseV2Login(.badPassword, "wrong password for \(name)", session) }
        case .failed:
            logger.error("refused login \(name) from \(address) (password hashing failed)")
            endLogin(of: session) { refuseV2Login(.storeUnavailable, "the password could not be hashed; try again later", session) }
        case .verified(let record):
            logins.throttle.recordSuccess(name: name)
            readStoredSession(attempt, record: record, claim: nil, session: session)
        case .claimed(let hash):
            readStoredSession(attempt, record: nil, claim: hash, session: session)
        }
    }

    /// Ends the login of `session` (phase `checkingPassword`): `step` answers it, then what the session
    /// sent meanwhile is handled in order; a session not logged in by then is under the login deadline again.
    func endLogin(of session: Session, _ step: () -> Void) {
        guard case .checkingPassword(_, let waiting) = sessions.phase(of: session) else { return }
        sessions.set(.awaitingLogin, of: session)
        step()
        if name(of: session) == nil { session.requireAdmission() }  // refused: the deadline again
        replay(waiting, from: session)
    }

    /// Answers a refused version 2 login with `code` (no log line: the caller wrote one).
    func refuseV2Login(_ code: ChatErrorCode, _ detail: String, _ session: Session, retryAfter: UInt64? = nil) {
        metrics.loginRefused(code)
        session.send(.v2(.error(code: code, detail: detail, id: nil, retryAfter: retryAfter)))
    }

    /// Creates the user of a first login; false (after answering) when the store fails.
    func createIfNew(_ name: String, record: UserRecord?, hash: String?, session: Session) -> Bool {
        guard record == nil else { return true }
        do {
            _ = try store.createUser(named: name, passwordHash: hash, at: Date())
            return true
        } catch {
            logger.error("store error creating user \(name): \(error)")
            session.send(
                .v2(.error(code: .storeUnavailable, detail: "the message store failed; try again later", id: nil, retryAfter: nil)))
            return false
        }
    }
}
