import ChatProtocol
import LongLink

/// What each message a client sends does, once it is within its rate and its turn has come.
extension Router {
    func handle(_ message: ChatMessage, from session: Session) {
        // One version per connection, the one its login used (heartbeats are answered in their own).
        if let name = name(of: session), let version = users[name]?.version, message.version != version,
            message != .heartbeat, message != .v2(.heartbeat)
        {
            logger.warning(
                "drop \(name) (protocol error: a version \(message.version.rawValue) message on a version \(version.rawValue) connection)")
            session.close()
            return
        }
        switch message {
        case .v2(let message):
            handle(message, from: session)
        case .login(let name, _):
            secondLogin(message, name: name, from: session)
        case .directMessage(let typed, let text):
            guard let sender = loggedIn(session, version: .v1, id: nil) else { return metrics.refused(.notLoggedIn) }
            let recipient = registeredName(of: typed)
            submit(.init(between: sender, and: recipient), recipient: recipient, text: text, from: sender, id: nil, session: session)
        case .broadcast(let text):
            guard let sender = loggedIn(session, version: .v1, id: nil) else { return metrics.refused(.notLoggedIn) }
            submit(.room, recipient: nil, text: text, from: sender, id: nil, session: session)
        case .heartbeat:
            break  // answered by the link layer
        case .loginAccepted, .delivery, .presence, .heartbeatAck, .error:
            session.send(.error(code: .badRequest, detail: "only the server sends \(message.functionCode)"))
        }
    }

    func handle(_ message: ChatMessageV2, from session: Session) {
        switch message {
        case .login(let name, _, _, _, _, _):
            secondLogin(.v2(message), name: name, from: session)
        case .directMessage(let id, let typed, let text):
            guard let sender = loggedIn(session, version: .v2, id: id) else { return metrics.refused(.notLoggedIn) }
            let recipient = registeredName(of: typed)
            submit(.init(between: sender, and: recipient), recipient: recipient, text: text, from: sender, id: id, session: session)
        case .broadcast(let id, let text):
            guard let sender = loggedIn(session, version: .v2, id: id) else { return metrics.refused(.notLoggedIn) }
            submit(.room, recipient: nil, text: text, from: sender, id: id, session: session)
        case .received(let conversation, let upTo):
            guard let name = loggedIn(session, version: .v2, id: nil) else { return }
            acknowledge(conversation, upTo: upTo, by: name)
        case .historyRequest(let conversation, let limit):
            guard let name = loggedIn(session, version: .v2, id: nil) else { return }
            sendHistory(of: conversation, limit: limit, to: name)
        case .who(let after, let limit):
            guard loggedIn(session, version: .v2, id: nil) != nil else { return }
            answerWho(after: after, limit: limit, session: session)
        case .heartbeat:
            break
        case .loginAccepted, .delivery, .presence, .heartbeatAck, .stored, .receipt, .history, .onlineUsers, .presenceChanges, .error:
            session.send(.v2(.error(code: .badRequest, detail: "only the server sends \(message.functionCode)", id: nil, retryAfter: nil)))
        }
    }

    /// The name `session` is logged in as, or nil after answering `notLoggedIn` in `version`.
    func loggedIn(_ session: Session, version: ChatProtocolVersion, id: UInt64?) -> String? {
        if let name = name(of: session) { return name }
        session.send(Router.error(.notLoggedIn, "log in first", id: id, version: version))
        return nil
    }

    /// An error in `version`; `id` names the numbered message it answers (version 2 only).
    /// A login that did not arrive as the session's first (``received(_:from:)`` queues those): one
    /// sent while an earlier login was decided, handled after it (queued in turn if that one was
    /// refused), or a second login on a logged-in connection (refused: `alreadyLoggedIn`). A session
    /// being replaced or closed is not answered.
    func secondLogin(_ login: ChatMessage, name: String, from session: Session) {
        if isLoginToQueue(login, from: session) {
            queueLogin(login, from: session)
        } else if self.name(of: session) != nil {
            refuseLogin(
                name, session, version: login.version, .alreadyLoggedIn, "this connection is logged in already",
                reason: "a second login on one connection")
        }
    }

    static func error(
        _ code: ChatErrorCode, _ detail: String, id: UInt64?, version: ChatProtocolVersion, retryAfter: UInt64? = nil
    ) -> ChatMessage {
        version == .v1 ? .error(code: code, detail: detail) : .v2(.error(code: code, detail: detail, id: id, retryAfter: retryAfter))
    }
}
