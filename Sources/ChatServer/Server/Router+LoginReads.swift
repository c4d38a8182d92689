import ChatProtocol
import Dispatch
import Foundation
import ChatSQLite
import LongLink
import SocketLog

/// A login's store calls, off the routing queue (issue 35 §3): its user's record before the login is
/// decided, and, for a stored session, the claim of its name and its delivery window after its
/// password is checked. On a cluster each call is a JetStream round trip; made one after another on
/// the routing queue they held every other session of the node back (a node logged in about 30 users a
/// second after another node died). Now at most ``maxLoginStoreWork`` run at once on
/// ``Logins/storeLanes``, and the routing queue goes on meanwhile.
///
/// A delivery window read off the queue must not miss a message stored while it is read: the router
/// notes, for each session whose window is being read, the highest sequence of each of its
/// conversations that it fans out meanwhile (``WindowNotes``), and the window takes them in when the
/// session is admitted.
extension Router {
    /// The highest sequence of each conversation of `name` stored while its delivery window is read.
    struct WindowNotes {
        let name: String
        var heads: [String: UInt64] = [:]

        /// Notes `message` if `name` reads its conversation.
        mutating func note(_ message: StoredMessage) {
            switch message.conversation {
            case .room: break
            case .direct(let first, let second): guard name == first || name == second else { return }
            }
            let key = message.conversation.description
            heads[key] = max(heads[key] ?? 0, message.sequence)
        }

        /// Extends `window` to what was noted.
        func apply(to window: inout DeliveryWindow) {
            for (conversation, head) in heads { window.available(conversation: conversation, upTo: head) }
        }
    }

    /// What the store said to a stored login whose password was checked.
    enum StoredLoginRead: Sendable {
        /// The session may start: its window and receipts; `claimed` when this login claimed the name.
        case ready(StoredSessionStart, claimed: Bool)
        /// Claimed by another login while this one hashed its password: check it against this record.
        case claimedMeanwhile(UserRecord)
        /// A user of a too similar name exists now.
        case nameTaken(String)
    }

    /// Runs `work` (store calls) on a free lane of ``Logins/storeLanes`` (or, when none is free, on the
    /// first to free up, before any new login: ``Logins/laneWaiters``), then `done` with its result on
    /// the routing queue.
    func readForLogin<T: Sendable>(
        _ work: @escaping @Sendable () throws -> T, then done: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let start = { [self] (lane: Int) in
            logins.storeLanes[lane].async { [self] in
                let result = Result { try work() }
                queue.async { [self] in
                    freeLane(lane)
                    done(result)
                }
            }
        }
        if let lane = logins.freeLanes.popLast() { start(lane) } else { logins.laneWaiters.append(start) }
    }

    /// `lane` has finished its call: to the first store work waiting for a lane, else free (and a
    /// login pass, which may have been waiting for it).
    private func freeLane(_ lane: Int) {
        if logins.laneWaiters.isEmpty {
            logins.freeLanes.append(lane)
            scheduleLoginPass()
        } else {
            logins.laneWaiters.removeFirst()(lane)
        }
    }

    /// Starts `login` of `session` (phase `loginQueued`, which holds what it sends meanwhile): reads its
    /// user's record off the routing queue, then decides it (``loginV1(_:token:record:session:)``,
    /// ``loginV2(_:password:token:instance:positions:presenceChanges:record:session:)``). A name no
    /// user can have is decided (refused) without a read.
    func startLogin(_ login: ChatMessage, from session: Session) {
        let name: String
        switch login {
        case .login(let typed, _), .v2(.login(let typed, _, _, _, _, _)): name = typed
        default: return
        }
        guard Router.invalidNameDetail(name) == nil else {
            logins.answered += 1
            return resumeLogin(of: session) { decideLogin(login, record: .success(nil), from: session) }
        }
        let store = store
        readForLogin({ try store.user(named: name) }) { [self] record in
            logins.answered += 1
            resumeLogin(of: session) { decideLogin(login, record: record, from: session) }
        }
    }

    private func decideLogin(_ login: ChatMessage, record: Result<UserRecord?, any Error>, from session: Session) {
        switch login {
        case .login(let name, let token):
            loginV1(name, token: token, record: record, session: session)
        case .v2(.login(let name, let password, let token, let instance, let positions, let presenceChanges)):
            loginV2(
                name, password: password, token: token, instance: instance, positions: positions,
                presenceChanges: presenceChanges, record: record, session: session)
        default:
            break
        }
    }

    /// Claims the name (`claim`: the new hash) or takes `record` (the password verified against it),
    /// and reads the stored session's window off the routing queue; then admits the session, or
    /// answers its login. The session stays in phase `checkingPassword` meanwhile.
    func readStoredSession(_ attempt: LoginAttempt, record: UserRecord?, claim hash: String?, session: Session) {
        let store = store
        let name = attempt.name
        let positions = attempt.positions
        logins.windowNotes[session.id] = WindowNotes(name: name)
        readForLogin({ try Router.readStoredLogin(store, name: name, record: record, claim: hash, positions: positions) }) {
            [self] result in
            let notes = logins.windowNotes.removeValue(forKey: session.id)
            storedSessionRead(result, notes: notes, session: session)
        }
    }

    /// The store calls of a stored login (on a lane of ``Logins/storeLanes``): the claim, if any, then the window.
    private static func readStoredLogin(
        _ store: any MessageStore, name: String, record: UserRecord?, claim hash: String?, positions: [String: UInt64]
    ) throws -> StoredLoginRead {
        guard let hash else {
            guard let record else { throw StoreError.unknownUser(name) }
            return .ready(try StoredSessionStart.read(from: store, record: record, positions: positions), claimed: false)
        }
        // Claimed while this login hashed: by another login, or by this user's own earlier attempt
        // whose write reached a clustered store only now (the NATS client resends what it buffered
        // over a reconnect after the request timed out). The password decides, as for any claimed name.
        let found = try store.user(named: name)
        if let detail = Router.similarNameDetail(name, found) { return .nameTaken(detail) }
        if let found, found.passwordHash != nil { return .claimedMeanwhile(found) }
        let claimed: UserRecord
        do {
            if let found {
                try store.setPasswordHash(hash, forUser: name)
                claimed = found
            } else {
                claimed = try store.createUser(named: name, passwordHash: hash, at: Date())
            }
        } catch StoreError.userExists(let holder) where holder == name {
            // Created between the read and the write (a store shared by several nodes).
            guard let winner = try store.user(named: name), winner.passwordHash != nil else { throw StoreError.userExists(holder) }
            return .claimedMeanwhile(winner)
        }
        return .ready(try StoredSessionStart.read(from: store, record: claimed, positions: positions), claimed: true)
    }

    /// The stored session of `session` is read (or its login failed there): admits it with its window
    /// (and what `notes` saw stored meanwhile), its receipts and the first deliveries; or answers.
    private func storedSessionRead(_ result: Result<StoredLoginRead, any Error>, notes: WindowNotes?, session: Session) {
        guard case .checkingPassword(let attempt, _) = sessions.phase(of: session) else { return }  // gone meanwhile
        let name = attempt.name
        let address = session.remoteAddress?.host ?? "?"
        switch result {
        case .success(.claimedMeanwhile(let record)):
            logger.info("login \(name) from \(address): claimed meanwhile, checking its password against that claim")
            checkPassword(attempt, against: record, session: session)
        case .success(.nameTaken(let detail)):
            endLogin(of: session) { refuseLogin(name, session, version: .v2, .nameTaken, detail, reason: detail) }
        case .failure(let error):
            logger.error("store error logging in \(name): \(error)")
            endLogin(of: session) { refuseV2Login(.storeUnavailable, "the message store failed; try again later", session) }
        case .success(.ready(var start, let claimed)):
            if claimed { logger.info("claim \(name) from \(address)") }
            notes?.apply(to: &start.window)
            logger.trace("path: \(name)'s login window: \(start.description)")
            endLogin(of: session) {
                guard
                    admit(
                        name, token: attempt.token, version: .v2, instance: attempt.instance, window: start.window,
                        presenceChanges: attempt.presenceChanges, session: session)
                else { return }
                for receipt in start.receipts {
                    session.send(.v2(.receipt(conversation: receipt.conversation, upTo: receipt.upTo, by: receipt.by)))
                }
                pump(name)
            }
        }
    }

    /// Notes `message` for every session whose delivery window is being read (Router+Delivery's fan-out).
    func noteForWindowsBeingRead(_ message: StoredMessage) {
        for id in logins.windowNotes.keys { logins.windowNotes[id]?.note(message) }
    }
}
