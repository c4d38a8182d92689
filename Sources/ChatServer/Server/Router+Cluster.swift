import ChatProtocol
import LongLink

/// What the other nodes of a cluster (``ChatCluster``) ask of this one, on the routing queue.
extension Router {
    /// `name` logged in on another node with this session's resume token or password: its session
    /// here gets `replaced` and is closed, as a second login on this node would do. The user stays
    /// online (on the other node): no presence change.
    func replacedElsewhere(_ name: String) {
        assertOnQueue()
        guard let user = sessions.logOut(name) else { return }
        sessions.set(.replaced(name: name), of: user.session)
        user.session.send(Router.error(.replaced, "logged in again from another connection", id: nil, version: user.version))
        user.session.close()
        logger.info("login \(name) on another node (replaced its session from \(Router.address(of: user.session)))")
    }

    /// A read receipt from a reader on another node, for the other user of `conversation` if that
    /// user's stored session is here.
    func deliverReceipt(_ conversation: String, upTo sequence: UInt64, by name: String) {
        assertOnQueue()
        guard let other = ConversationID(conversation)?.otherUser(than: name) else { return }
        guard let reader = users[other], reader.window != nil else { return }
        reader.session.send(.v2(.receipt(conversation: conversation, upTo: sequence, by: name)))
    }
}
