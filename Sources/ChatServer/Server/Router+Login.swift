import ChatProtocol
import ChatSQLite
import Dispatch
import Foundation
import LongLink
import SocketLog

/// Version 2 logins: names claimed with a password, checked off the routing queue, throttled per name
/// and per address; a stored session's delivery window starts where its client says it is.
extension Router {
    /// What checking (or claiming) a password came to.
    enum PasswordOutcome: Sendable {
        case verified
        case claimed(hash: String)
        case wrong
        case failed
    }

    func loginV2(
        _ name: String, password: String?, token: String?, instance: String, positions: [String: UInt64],
        presenceChanges: Bool = false, session: Session
    ) {
        func refuse(_ code: ChatErrorCode, _ detail: String, retryAfter: UInt64? = nil) {
            metrics.loginRefused(code)
            session.send(.v2(.error(code: code, detail: detail, id: nil, retryAfter: retryAfter)))
        }
        guard self.name(of: session) == nil else {
            refuseLogin(
                name, session, version: .v2, .alreadyLoggedIn, "this connection is logged in already",
                reason: "a second login on one connection")
            return
        }
        if let refusal = Router.invalidNameDetail(name) {
            refuseLogin(name, session, version: .v2, .invalidName, refusal, reason: "invalid name: \(refusal)")
            return
        }
        let address = session.remoteAddress?.host ?? "?"
        let record: UserRecord?
        do {
            record = try store.user(named: name)
        } catch {
            logger.error("store error reading user \(name): \(error)")
            refuse(.storeUnavailable, "the message store failed; try again later")
            return
        }
        if let detail = Router.similarNameDetail(name, record) {
            refuseLogin(name, session, version: .v2, .nameTaken, detail, reason: detail)
            return
        }
        guard let password else {
            if record?.passwordHash != nil {
                logger.notice("refused login \(name) from \(address) (no password for a claimed name)")
                refuse(.badPassword, "\(name) is claimed: log in with its password")
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
            refuse(.throttled, "too many wrong passwords; try again in \(seconds) s", retryAfter: seconds)
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
        checkPassword(attempt, against: record?.passwordHash, session: session)
    }

    /// Checks `password` against `existingHash` (or hashes it to claim the name when nil) on a hashing
    /// queue, then finishes the login on the routing queue. `session` is held meanwhile.
    private func checkPassword(_ attempt: LoginAttempt, against existingHash: String?, session: Session) {
        let hasher = logins.hasher
        let password = attempt.password
        logins.nextHashingQueue().async { [self] in
            // Gone meanwhile (gave up waiting, say): no hash for nobody. Checks queued behind a crowd
            // of clients that reconnect on a timeout would otherwise grow faster than they are done.
            guard session.isConnected else { return }
            let outcome: PasswordOutcome
            if let existingHash {
                outcome = hasher.verify(password, against: existingHash) ? .verified : .wrong
            } else if let hash = try? hasher.hash(password) {
                outcome = .claimed(hash: hash)
            } else {
                outcome = .failed
            }
            queue.async { [self] in finishLogin(outcome: outcome, session: session) }
        }
    }

    private func finishLogin(outcome: PasswordOutcome, session: Session) {
        assertOnQueue()
        // Gone (or being closed) while its password was checked: nothing to answer.
        guard case .checkingPassword(let attempt, let waiting) = sessions.phase(of: session) else { return }
        sessions.set(.awaitingLogin, of: session)
        let name = attempt.name
        var checkingAgain = false
        defer {
            if !checkingAgain {
                if self.name(of: session) == nil { session.requireAdmission() }  // refused: the deadline again
                replay(waiting, from: session)
            }
        }
        let address = session.remoteAddress?.host ?? "?"
        func refuse(_ code: ChatErrorCode, _ detail: String) {
            metrics.loginRefused(code)
            session.send(.v2(.error(code: code, detail: detail, id: nil, retryAfter: nil)))
        }
        switch outcome {
        case .wrong:
            logins.throttle.recordFailure(name: name, address: address, now: .now)
            logger.notice("refused login \(name) from \(address) (wrong password)")
            refuse(.badPassword, "wrong password for \(name)")
            return
        case .failed:
            logger.error("refused login \(name) from \(address) (password hashing failed)")
            refuse(.storeUnavailable, "the password could not be hashed; try again later")
            return
        case .verified:
            logins.throttle.recordSuccess(name: name)
        case .claimed(let hash):
            // Claimed while this login hashed: by another login, or by this user's own earlier attempt
            // whose write reached a clustered store only now (the NATS client resends what it buffered
            // over a reconnect after the request timed out). The password decides, as for any claimed
            // name: verified, or badPassword.
            func checkAgain(against claimedHash: String) {
                logger.info("login \(name) from \(address): claimed meanwhile, checking its password against that claim")
                sessions.set(.checkingPassword(attempt, held: waiting), of: session)
                checkingAgain = true
                checkPassword(attempt, against: claimedHash, session: session)
            }
            do {
                let record = try store.user(named: name)  // again: see above
                if let detail = Router.similarNameDetail(name, record) {
                    refuseLogin(name, session, version: .v2, .nameTaken, detail, reason: detail)
                    return
                }
                if let claimedHash = record?.passwordHash { return checkAgain(against: claimedHash) }
                if record == nil {
                    _ = try store.createUser(named: name, passwordHash: hash, at: Date())
                } else {
                    try store.setPasswordHash(hash, forUser: name)
                }
                logger.info("claim \(name) from \(address)")
            } catch StoreError.userExists(let holder) where holder == name {
                // Created between the read and the write (a store shared by several nodes).
                if let claimedHash = try? store.user(named: name)?.passwordHash { return checkAgain(against: claimedHash) }
                refuse(.storeUnavailable, "the message store failed; try again later")
                return
            } catch {
                logger.error("store error claiming \(name): \(error)")
                refuse(.storeUnavailable, "the message store failed; try again later")
                return
            }
        }
        do {
            guard let record = try store.user(named: name) else { return }
            let window = try deliveryWindow(for: record, positions: attempt.positions)
            guard
                admit(
                    name, token: attempt.token, version: .v2, instance: attempt.instance, window: window,
                    presenceChanges: attempt.presenceChanges, session: session)
            else { return }
            sendReceipts(to: name)
            pump(name)
        } catch {
            logger.error("store error logging in \(name): \(error)")
            refuse(.storeUnavailable, "the message store failed; try again later")
        }
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

    /// The window of a stored session: every conversation of the user (the room and each direct
    /// conversation it has), starting where the client says it is (`positions`), or where the server
    /// last saw it acknowledge when the client does not say (a new installation); the room never before
    /// the user's first login.
    func deliveryWindow(for record: UserRecord, positions: [String: UInt64]) throws -> DeliveryWindow {
        var conversations = try store.directConversations(of: record.name)
        conversations.append(.room)
        var starts: [String: UInt64] = [:]
        var heads: [String: UInt64] = [:]
        for conversation in conversations {
            let key = conversation.description
            let head = try store.head(of: conversation)
            var start = try positions[key] ?? store.position(of: record.name, in: conversation)
            if conversation == .room { start = max(start, record.roomStart) }
            starts[key] = min(start, head)
            heads[key] = head
        }
        var window = DeliveryWindow(positions: starts, limit: Router.deliveryWindow)
        for (conversation, head) in heads { window.available(conversation: conversation, upTo: head) }
        logger.trace("path: \(record.name)'s login window: \(heads.keys.sorted().map { "\($0) \(starts[$0] ?? 0)..\(heads[$0] ?? 0)" })")
        return window
    }

    /// At login: how far the other user of each direct conversation has received (✓✓ for what was sent
    /// while this user was away).
    func sendReceipts(to name: String) {
        guard let user = users[name], user.window != nil,
            let conversations = try? store.directConversations(of: name)
        else { return }
        for conversation in conversations {
            guard case .direct(let first, let second) = conversation else { continue }
            let other = first == name ? second : first
            guard other != name, let position = try? store.position(of: other, in: conversation), position > 0 else { continue }
            user.session.send(.v2(.receipt(conversation: conversation.description, upTo: position, by: other)))
        }
    }
}
