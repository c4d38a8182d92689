import ChatProtocol

/// Who gets a name at the end of a login (``Router``'s `admit`): a rule with no socket and no store,
/// from the name, what proves the login is its user's, the users online here and the user's session
/// on another node (if any), to one decision the router carries out.
enum NameClaim {
    /// What ``decide(_:token:proven:table:remote:)`` decided.
    enum Decision: Equatable {
        /// Refused `nameTaken` with `detail` (on the wire) and `reason` (the log line's).
        case refuse(detail: String, reason: String)
        /// The user is online on node `node`: its session there is replaced.
        case replaceOnNode(String)
        /// The user is online here: its session here is replaced.
        case replaceHere
        /// Nobody has the name online.
        case take
    }

    /// The decision for a login as `name` with resume token `token`; `proven`: a password was checked
    /// (a stored session), which proves the user as its resume token does. `remote`: the node and the
    /// resume token's hash (``ClusterLink/hash(_:)``) of the user's session on another node;
    /// `hashToken` hashes a token the same way.
    static func decide(
        _ name: String, token: String?, proven: Bool, table: SessionTable, remote: (node: String, tokenHash: String)?,
        hashToken: (String) -> String
    ) -> Decision {
        let existing = table.users[name]
        if existing == nil, let other = table.onlineNames.similar(to: UserName.Key(name)) {
            return .refuse(detail: Router.similarOnlineDetail(name, other), reason: "too similar to \(other), who is logged in")
        }
        if existing == nil, let remote {
            // Online on another node: taken over there exactly as here (resume token or password).
            guard proven || token.map(hashToken) == remote.tokenHash else {
                return .refuse(detail: "\(name) is already logged in", reason: "already logged in on node \(remote.node)")
            }
            return .replaceOnNode(remote.node)
        }
        if let existing {
            // The resume token, or the password (a stored session), proves it is the same user.
            guard proven || token.map(existing.hasResumeToken) == true else {
                return .refuse(detail: "\(name) is already logged in", reason: "already logged in from \(existing.session.address)")
            }
            return .replaceHere
        }
        return .take
    }
}
