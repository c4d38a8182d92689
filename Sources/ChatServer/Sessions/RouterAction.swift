import ChatProtocol

/// What a routing service decided, for the ``Router`` to perform in order (``Router/perform(_:)``):
/// the services compute, the router does. Tests compare a service's actions with the expected ones.
enum RouterAction {
    /// `message` to one session.
    case send(ChatMessage, to: any ChatPeer)
    /// `message` to many sessions, encoded once per transport where it can be.
    case sendToAll(ChatMessage, [any ChatPeer])
}

extension RouterAction: CustomStringConvertible {
    /// `send MESSAGE to #ID`, `send MESSAGE to #ID, #ID`: for test failures.
    var description: String {
        switch self {
        case .send(let message, let peer): return "send \(message) to #\(peer.id)"
        case .sendToAll(let message, let peers): return "send \(message) to \(peers.map { "#\($0.id)" }.joined(separator: ", "))"
        }
    }
}
