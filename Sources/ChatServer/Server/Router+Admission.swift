import ChatProtocol
import Foundation
import LongLink

/// Version 1 logins, and the admission every login ends with: the session takes its name (from an
/// older session of the same user, here or on another node), gets its reply and the roster.
extension Router {
    /// Decides a version 1 login with its user's `record` as read from the store (Router+LoginReads).
    func loginV1(_ name: String, token: String?, record lookup: Result<UserRecord?, any Error>, session: Session) {
        if let refusal = Router.invalidNameDetail(name) {
            refuseLogin(name, session, version: .v1, .invalidName, refusal, reason: "invalid name: \(refusal)")
            return
        }
        do {
            let record = try lookup.get()
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
            metrics.loginRefused(.nameTaken)
            session.send(.error(code: .nameTaken, detail: "\(name) cannot be checked now"))
            return
        }
        admit(name, token: token, version: .v1, instance: delivery.v1Instance, window: nil, session: session)
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
        guard shutdown == nil else { return false }
        let address = Router.address(of: session)
        let key = UserName.Key(name)
        let remote = users[name] == nil ? cluster?.remote[name].map { (node: $0.node, tokenHash: $0.token) } : nil
        switch NameClaim.decide(name, token: token, proven: window != nil, table: sessions, remote: remote, hashToken: ClusterLink.hash) {
        case .refuse(let detail, let reason):
            refuseLogin(name, session, version: version, .nameTaken, detail, reason: reason)
            return false
        case .replaceOnNode(let node):
            cluster?.replace(name, on: node)
            logger.info("login \(name) from \(address) (replaced its session on node \(node))")
        case .replaceHere:
            guard let existing = users[name] else { return false }
            // The same client again, over a new connection: its old session is stale.
            sessions.set(.replaced(name: name), of: existing.session)
            existing.session.send(Router.error(.replaced, "logged in again from another connection", id: nil, version: existing.version))
            existing.session.close()
            logger.info("login \(name) from \(address) (replaced its session from \(Router.address(of: existing.session)))")
        case .take:
            logger.info("login \(name) from \(address)")
        }
        metrics.loginsAccepted.increment()
        let resumeToken = token ?? UUID().uuidString
        session.admit()  // the login deadline no longer applies
        let board = presence.board
        let isNew = users[name] == nil && !board.contains(name)
        sessions.logIn(
            name, key: key,
            user: User(
                session: session, resumeToken: resumeToken, version: version, clientInstance: instance, window: window,
                presenceChanges: presenceChanges))
        let listed = board.first(ChatServer.maxOnlineListed, excluding: name)
        let count = cluster == nil ? users.count - 1 : board.count - (board.contains(name) ? 1 : 0)
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
        if isNew { sendPresence(of: name, online: true) }
        cluster?.announceLogin(name, resumeToken: resumeToken)
        sessions.users[name]?.presenceSeen = presence.board.event
        return true
    }
}
