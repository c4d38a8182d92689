import AsyncSocket
import ChatProtocol
import Foundation
import LongLink

/// The messages from the server, shown as lines; own messages recognised.
extension ChatPresenter {
    // MARK: Messages

    func handle(_ message: ChatMessage) {
        if ChatCodec().isGoingAway(message) {
            say("* server going away; reconnecting")  // the link reconnects at once, then on its schedule
            return
        }
        switch message {
        case .loginAccepted(let name, let online, let count, let token):
            link?.greeting = .login(name: name, resumeToken: token)
            say("* logged in as \(name.terminalSafe); online: \(list(online, count))")
            updateStatus {
                $0.connection = .online(name: name, liveOnly: false)
                $0.serverUnavailable = false
            }
        case .delivery(let from, let text, let isDirect):
            say(lines.delivery(from: from, text: text, isDirect: isDirect, conversation: nil))
        case .presence(let name, let online):
            say("* \(lines.shown(name)) \(online ? "joined" : "left")")
        case .error(let code, let detail):
            if Self.isFailure(code) { failed = true }
            say(lines.error(code: code, detail: detail, id: nil))
            loginFailed(code, retryAfter: nil)
        case .v2(let message):
            handle(message)
        case .login, .directMessage, .broadcast, .heartbeat, .heartbeatAck:
            break  // client → server only
        }
    }

    func handle(_ message: ChatMessageV2) {
        switch message {
        case .loginAccepted(let name, let online, let count, let token, let stored):
            login?.update(token: token)
            session.loggedIn = true
            say("* logged in as \(name.terminalSafe)\(stored ? "" : " (live only: no password)"); online: \(list(online, count))")
            updateStatus {
                $0.connection = .online(name: name, liveOnly: !stored)
                $0.serverUnavailable = false
            }
            finishIfDone()
        case .delivery(let from, let text, let isDirect, let conversation, let sequence, _):
            if from == lines.me, let sequence, conversation != "direct:\(from) \(from)",
                isOwn(conversation: conversation, sequence: sequence, text: text)
            {
                return  // my own message, already shown with its id
            }
            say(lines.delivery(from: from, text: text, isDirect: isDirect, conversation: conversation))
        case .presence(let name, let online):
            say("* \(lines.shown(name)) \(online ? "joined" : "left")")
        case .stored(let id, let conversation, let sequence):
            // Passed on just before .stored(id:): keep its place for receipts and echoes.
            memory.lastAnswer = (id, sequence)
            if let sequence { useSentLog { try $0.record(id: id, conversation: conversation, sequence: sequence) } }
        case .receipt(let conversation, let upTo, let by):
            let ids = useSentLog { try $0.receipt(conversation: conversation, upTo: upTo) } ?? []
            for id in ids { say(lines.receipt(id: id, by: by)) }
        case .history(let conversation, let messages):
            for (index, line) in lines.history(conversation: conversation, messages: messages).enumerated() {
                say(line, entry: index > 0)
            }
        case .presenceChanges(let online, let offline, let count, let unlisted):
            for line in lines.presenceChanges(online: online, offline: offline, onlineCount: count, unlisted: unlisted) {
                say(line)
            }
        case .onlineUsers(let names, let count, let more):
            memory.whoCursor = names.last ?? memory.whoCursor
            memory.whoHasMore = more
            say(lines.onlineUsers(names: names, onlineCount: count, more: more))
        case .error(.rateLimited, let detail, let id?, _):
            // The message stays in the outbox; the link resends it after the pause, then the rest one
            // at a time (LongLink's Outbox.slowDown()). Said once until the outbox is empty.
            guard !session.slowedDown else { return }
            session.slowedDown = true
            say(lines.error(code: .rateLimited, detail: detail, id: id))
            say("* sending one message at a time until the outbox is empty")
        case .error(.notLoggedIn, _, _?, _):
            // A message sent behind a login that failed: it stays in the outbox and is resent after
            // the next login (docs/PROTOCOL.md "Before login accepted"); the login's error was shown.
            break
        case .error(let code, let detail, let id, let retryAfter):
            if Self.isFailure(code) { failed = true }
            say(lines.error(code: code, detail: detail, id: id))
            if id == nil, !session.loggedIn { loginFailed(code, retryAfter: retryAfter) }  // not a history's storeUnavailable
        case .login, .directMessage, .broadcast, .received, .historyRequest, .who, .heartbeat, .heartbeatAck:
            break  // client → server only (heartbeat acknowledgements never reach the app)
        }
    }

    /// A login answered with an error: a refused name or password ends the session; `throttled`
    /// reconnects after `retryAfter` seconds (30 if not said), `storeUnavailable` (the server's store,
    /// or a cluster node's NATS, failed for a moment) and `serverBusy` (too many logins waiting there)
    /// after `retryAfter` seconds (1 if not said).
    func loginFailed(_ code: ChatErrorCode, retryAfter: UInt64?) {
        switch code {
        case .nameTaken, .invalidName, .badPassword:
            session.refusal = .loginRefused
            link?.disconnect()
        case .throttled:
            session.loginRetry = ("login throttled", .seconds(Int64(clamping: max(retryAfter ?? 30, 1))))
            link?.disconnect()
        case .storeUnavailable:
            session.loginRetry = ("the server's store is unavailable", .seconds(Int64(clamping: max(retryAfter ?? 1, 1))))
            link?.disconnect()
        case .serverBusy:
            session.loginRetry = ("the server is busy", .seconds(Int64(clamping: max(retryAfter ?? 1, 1))))
            link?.disconnect()
        default:
            break
        }
    }

    // MARK: Own messages

    /// Whether my delivery numbered `sequence` of `conversation` is one of this client's messages:
    /// recorded from a `stored` answer, or, before its answer, the oldest unanswered message with this
    /// conversation and text (then recorded at once, for receipts). A message of another client of
    /// mine with the same text as an unanswered one of this client is taken for it.
    func isOwn(conversation: String, sequence: UInt64, text: String) -> Bool {
        if (useSentLog({ try $0.id(conversation: conversation, sequence: sequence) }) ?? nil) != nil { return true }
        let match = memory.unanswered.filter { $0.value.conversation == conversation && $0.value.text == text }.keys.min()
        guard let id = match else { return false }
        memory.unanswered[id] = nil
        useSentLog { try $0.record(id: id, conversation: conversation, sequence: sequence) }
        return true
    }

    /// Keeps own message `id` in ``unanswered`` until the server answers it.
    func remember(_ id: UInt64, _ message: ChatMessage) {
        switch message {
        case .directMessage(let to, let text), .v2(.directMessage(_, let to, let text)):
            memory.unanswered[id] = (ConversationID(between: lines.me, and: to).description, text)
        case .broadcast(let text), .v2(.broadcast(_, let text)):
            memory.unanswered[id] = ("room", text)
        default:
            break
        }
    }

    /// Runs `body` on the sent-message log; a failure is shown once and read as "nothing".
    @discardableResult
    func useSentLog<Result>(_ body: (SentMessageLog) throws -> Result) -> Result? {
        guard let sentLog else { return nil }
        do {
            return try body(sentLog)
        } catch {
            if !memory.sentLogFailed {
                memory.sentLogFailed = true
                fail("cannot use the sent-message log \(sentLog.path): \(error)")
            }
            return nil
        }
    }
}
