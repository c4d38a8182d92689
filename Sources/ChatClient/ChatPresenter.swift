import AsyncSocket
import ChatProtocol
import Foundation
import LongLink

/// The chat client's mind: turns link events into lines (``ChatLines``) and the status
/// (``ChatClient/Status``), keeps what it needs to show each thing once (own messages announced,
/// receipts matched through the ``SentMessageLog``), and decides when the session ends and with which
/// status.
///
/// Unchecked Sendable: used on the client's serial queue only (`link` and `login` are set once, before
/// the first event); its timers hop to that queue.
final class ChatPresenter: @unchecked Sendable {
    let lines: ChatLines
    let version: ChatProtocolVersion
    let keepsTrying: Bool
    let wait: Duration
    let sentLog: SentMessageLog?
    let output: @Sendable (String) -> Void
    let onStatus: (@Sendable (ChatClient.Status) -> Void)?
    let onFinish: @Sendable (ChatClient.ExitStatus) -> Void
    /// The wall clock of the lines' times and the status's reconnect times.
    let now: @Sendable () -> Date
    /// The loop whose clock times ``ChatClient/Configuration/wait`` and throttling delays.
    let loop: EventLoop
    let queue: DispatchQueue
    var link: LongLinkClient<ChatCodec>?
    var login: ChatLogin?
    /// Called on the client's queue after `onFinish` (the client lets go of itself there).
    var afterFinish: (@Sendable () -> Void)?

    /// The reconnect attempt in progress, if any.
    private var attempt: Int?
    private var finished = false
    private var refusal: ChatClient.ExitStatus?
    /// After a login answered `throttled` or `storeUnavailable`: why, and how long until reconnecting.
    private var loginRetry: (reason: String, delay: Duration)?
    private var connected = false
    /// Logged in on the current connection (version 2: what is sent after the input ends is answered).
    private var loggedIn = false
    private var inputHasEnded = false
    /// Input ended and the outbox is empty: closing after the last answers.
    private var draining = false
    private var waitTimer: Scheduled?
    /// The `stored` answer just passed on, for the ``LongLinkClient/Event/stored(id:_:)`` that follows.
    private var lastAnswer: (id: UInt64, sequence: UInt64?)?
    /// Own messages in the outbox (this run's and an earlier run's) by id: their conversation and
    /// text, to recognise them when the server delivers them back before answering `stored` (after a
    /// restart, the login's backlog comes before the answers to the resent messages).
    private var unanswered: [UInt64: (conversation: String, text: String)] = [:]
    private var sentLogFailed = false
    /// `/who` paging: the last name of the latest page shown, and whether names follow it.
    private var whoCursor: String?
    private var whoHasMore = false
    /// A `rateLimited` answer has been shown and the outbox has not been empty since: the next ones
    /// are not shown (the link resends them, one at a time).
    private var slowedDown = false
    /// Something failed along the way (a message refused, an error from the server, a command not
    /// understood): a clean end is ``ChatClient/ExitStatus/completedWithErrors`` rather than `quit`.
    private(set) var failed = false
    /// What ``onStatus`` was last told.
    private(set) var status: ChatClient.Status

    init(
        configuration: ChatClient.Configuration, sentLog: SentMessageLog?, group: EventLoopGroup, queue: DispatchQueue,
        output: @escaping @Sendable (String) -> Void, onStatus: (@Sendable (ChatClient.Status) -> Void)? = nil,
        onFinish: @escaping @Sendable (ChatClient.ExitStatus) -> Void
    ) {
        lines = ChatLines(
            style: configuration.style, me: configuration.name, color: configuration.color,
            timestamps: configuration.timestamps, timeZone: configuration.timeZone)
        now = configuration.clock
        status = ChatClient.Status(
            connecting: configuration.host, port: configuration.port,
            outboxCount: configuration.protocolVersion == .v2 ? 0 : nil)
        status.heartbeatInterval = configuration.smartHeartbeat?.minimum
        self.onStatus = onStatus
        version = configuration.protocolVersion
        if case .keepTrying = configuration.reconnectPolicy { keepsTrying = true } else { keepsTrying = false }
        wait = configuration.wait
        self.sentLog = sentLog
        self.output = output
        self.onFinish = onFinish
        loop = group.next()
        self.queue = queue
    }

    // MARK: Calls from ChatClient (on the queue)

    /// Writes `line`, stamped (``ChatLines/stamped(_:at:entry:)``; `entry`: a line of a history).
    func say(_ line: String, entry: Bool = false) {
        guard !finished else { return }
        output(lines.stamped(line, at: now(), entry: entry))
    }

    /// Writes `line` as an error (`! line`) and remembers that something failed.
    func fail(_ line: String) {
        failed = true
        say("! " + line)
    }

    /// Changes the status; tells ``onStatus`` when it changed.
    private func updateStatus(_ change: (inout ChatClient.Status) -> Void) {
        var new = status
        change(&new)
        guard new != status else { return }
        status = new
        if !finished { onStatus?(new) }
    }

    /// Version 2: the status's outbox count, moved by `change` as messages enter it (accepted) and
    /// leave it (stored, refused), in the order the events are shown (the link's own count may be
    /// ahead of them).
    private func countOutbox(_ change: Int) {
        guard version == .v2 else { return }
        updateStatus { $0.outboxCount = max(($0.outboxCount ?? 0) + change, 0) }
        if status.outboxCount == 0 { slowedDown = false }
    }

    /// Before connecting: version 2 counts what an earlier run left in the outbox (`earlier`: those
    /// messages, by id).
    func starting(_ delivery: DeliveryStatus?, earlier: [(id: UInt64, message: ChatMessage)]) {
        onStatus?(status)
        guard let delivery else { return }
        for (id, message) in earlier { remember(id, message) }
        if delivery.outboxCount > 0 {
            say("* \(Self.messages(delivery.outboxCount)) from an earlier run in the outbox; sent once logged in")
            updateStatus { $0.outboxCount = delivery.outboxCount }
        }
    }

    /// Own message `id` is in the outbox (called before any answer to it is handled).
    func accepted(id: UInt64, message: ChatMessage) {
        remember(id, message)
        if let line = lines.accepted(id: id, message) { say(line) }
        countOutbox(1)
    }

    /// Version 1: own `message` handed to the link (no id, no outbox).
    func sent(_ message: ChatMessage) {
        if let line = lines.sent(message) { say(line) }
    }

    /// The `who` for `/who` (`more` false: the first page) or `/who more` (the page after the last one
    /// shown); `nil`, after saying so, when the last page shown was the end of the list.
    func whoRequest(more: Bool) -> ChatMessage? {
        guard more else { return .v2(.who(after: nil, limit: ChatCodec.maxWhoLimit)) }
        guard whoHasMore, let whoCursor else {
            say(lines.noMoreOnline())
            return nil
        }
        return .v2(.who(after: whoCursor, limit: ChatCodec.maxWhoLimit))
    }

    func inputEnded() {
        guard !finished else { return }
        inputHasEnded = true
        updateStatus { $0.inputEnded = true }
        restartWaitTimer()
        if version == .v1 {
            link?.disconnectAfterSending()
        } else {
            finishIfDone()
        }
    }

    /// ``ChatClient/stop()``: nothing more is shown or reported.
    func abandon() {
        finished = true
        waitTimer?.cancel()
        waitTimer = nil
    }

    // MARK: Link events

    func handle(_ event: LongLinkClient<ChatCodec>.Event) {
        guard !finished else { return }
        if let refusal {
            // The login was refused: whatever the link says next, the session ends.
            guard case .disconnected = event else { return }
            say("* disconnected (login refused)")
            reportOutboxLeft()
            finish(refusal)
            return
        }
        switch event {
        case .connected(let host, let port):
            connected = true
            let server = Endpoint(host: host, port: port)
            if let attempt {
                say("* reconnect attempt \(attempt): connected to \(server)")
            } else {
                say("* connected to \(server)")
            }
            attempt = nil
            updateStatus { $0.connection = .loggingIn(name: lines.me) }
        case .secured:
            break  // `--tls` asked for it; a failed handshake is reported as the disconnect's reason
        case .connectFailed(let error):
            if let attempt {
                say("* reconnect attempt \(attempt) failed: \(error)")
            } else {
                say("* connect failed: \(error)")
            }
        case .reconnecting(let attempt, let delay, _):  // the line (the event's description) names the endpoint
            self.attempt = attempt
            let time = now()
            say(lines.reconnecting("\(event)", delay: delay, now: time))
            updateStatus { $0.connection = .reconnecting(attempt: attempt, at: time.addingTimeInterval(Self.interval(delay))) }
        case .disconnected(let reason):
            disconnected(reason)
        case .heartbeatIntervalChanged(let from, let to, let reason):
            say("* heartbeat interval \(Self.seconds(from)) s → \(Self.seconds(to)) s (\(reason))")
            updateStatus { $0.heartbeatInterval = to }
        case .heartbeatProbe(let interval, let succeeded):
            if !succeeded { say("* no answer to the heartbeat after \(Self.seconds(interval)) s idle") }
        case .networkChanged(let from, let to):
            say("* network changed: \((from ?? "unknown").terminalSafe) → \((to ?? "unknown").terminalSafe)")
        case .serverUnavailable:
            if draining {
                finish(.quit)  // everything was stored; only the goodbye could not be said
            } else if keepsTrying && !(version == .v1 && inputHasEnded) {
                say("! server unavailable; still trying")
                updateStatus { $0.serverUnavailable = true }
            } else {
                say("* server unavailable")
                reportOutboxLeft()
                finish(.serverUnavailable)
            }
        case .received(let message):
            handle(message)
        case .stored(let id, _):
            unanswered[id] = nil
            let live = lastAnswer?.id == id && lastAnswer?.sequence == nil
            lastAnswer = nil
            say(lines.stored(id: id, live: live))
            countOutbox(-1)
            progressed()
        case .refused(let id, _):
            unanswered[id] = nil
            failed = true
            say(lines.refused(id: id))
            countOutbox(-1)
            progressed()
        case .sendFailed(let message, let reason):
            fail("not sent (\(reason)): \(message.description.terminalSafe)")
        }
    }

    private func disconnected(_ reason: LongLinkClient<ChatCodec>.DisconnectReason) {
        connected = false
        loggedIn = false
        if reason == .byUser, let (why, delay) = loginRetry, let link {
            loginRetry = nil
            say("* disconnected (\(why)); trying again in \(Self.seconds(delay)) s")
            let at = now().addingTimeInterval(Self.interval(delay))
            updateStatus { $0.connection = .reconnecting(attempt: nil, at: at) }
            loop.scheduleTask(in: delay) { link.connect() }
            return
        }
        say("* disconnected (\(reason))")
        guard reason == .byUser else { return }
        updateStatus { $0.connection = .offline }
        let left = outboxCount()
        if left > 0 { reportOutboxLeft() }
        finish(left > 0 ? .serverUnavailable : .quit)
    }

    // MARK: Messages

    private func handle(_ message: ChatMessage) {
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

    private func handle(_ message: ChatMessageV2) {
        switch message {
        case .loginAccepted(let name, let online, let count, let token, let stored):
            login?.update(token: token)
            loggedIn = true
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
            lastAnswer = (id, sequence)
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
            whoCursor = names.last ?? whoCursor
            whoHasMore = more
            say(lines.onlineUsers(names: names, onlineCount: count, more: more))
        case .error(.rateLimited, let detail, let id?, _):
            // The message stays in the outbox; the link resends it after the pause, then the rest one
            // at a time (LongLink's Outbox.slowDown()). Said once until the outbox is empty.
            guard !slowedDown else { return }
            slowedDown = true
            say(lines.error(code: .rateLimited, detail: detail, id: id))
            say("* sending one message at a time until the outbox is empty")
        case .error(.notLoggedIn, _, _?, _):
            // A message sent behind a login that failed: it stays in the outbox and is resent after
            // the next login (docs/PROTOCOL.md "Before login accepted"); the login's error was shown.
            break
        case .error(let code, let detail, let id, let retryAfter):
            if Self.isFailure(code) { failed = true }
            say(lines.error(code: code, detail: detail, id: id))
            if id == nil, !loggedIn { loginFailed(code, retryAfter: retryAfter) }  // not a history's storeUnavailable
        case .login, .directMessage, .broadcast, .received, .historyRequest, .who, .heartbeat, .heartbeatAck:
            break  // client → server only (heartbeat acknowledgements never reach the app)
        }
    }

    /// A login answered with an error: a refused name or password ends the session; `throttled`
    /// reconnects after `retryAfter` seconds (30 if not said), `storeUnavailable` (the server's store,
    /// or a cluster node's NATS, failed for a moment) after `retryAfter` seconds (1 if not said).
    private func loginFailed(_ code: ChatErrorCode, retryAfter: UInt64?) {
        switch code {
        case .nameTaken, .invalidName, .badPassword:
            refusal = .loginRefused
            link?.disconnect()
        case .throttled:
            loginRetry = ("login throttled", .seconds(Int64(clamping: max(retryAfter ?? 30, 1))))
            link?.disconnect()
        case .storeUnavailable:
            loginRetry = ("the server's store is unavailable", .seconds(Int64(clamping: max(retryAfter ?? 1, 1))))
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
    private func isOwn(conversation: String, sequence: UInt64, text: String) -> Bool {
        if (useSentLog({ try $0.id(conversation: conversation, sequence: sequence) }) ?? nil) != nil { return true }
        let match = unanswered.filter { $0.value.conversation == conversation && $0.value.text == text }.keys.min()
        guard let id = match else { return false }
        unanswered[id] = nil
        useSentLog { try $0.record(id: id, conversation: conversation, sequence: sequence) }
        return true
    }

    /// Keeps own message `id` in ``unanswered`` until the server answers it.
    private func remember(_ id: UInt64, _ message: ChatMessage) {
        switch message {
        case .directMessage(let to, let text), .v2(.directMessage(_, let to, let text)):
            unanswered[id] = (ConversationID(between: lines.me, and: to).description, text)
        case .broadcast(let text), .v2(.broadcast(_, let text)):
            unanswered[id] = ("room", text)
        default:
            break
        }
    }

    /// Runs `body` on the sent-message log; a failure is shown once and read as "nothing".
    @discardableResult
    private func useSentLog<Result>(_ body: (SentMessageLog) throws -> Result) -> Result? {
        guard let sentLog else { return nil }
        do {
            return try body(sentLog)
        } catch {
            if !sentLogFailed {
                sentLogFailed = true
                fail("cannot use the sent-message log \(sentLog.path): \(error)")
            }
            return nil
        }
    }

    // MARK: Ending

    /// A message was stored or refused: the wait starts over, and the session may be done.
    private func progressed() {
        guard inputHasEnded else { return }
        restartWaitTimer()
        finishIfDone()
    }

    /// Version 2, input ended: once logged in and the outbox is empty, close after the last answers.
    /// Until the login is answered the session waits (a refused login ends it with its own status; no
    /// login within ``ChatClient/Configuration/wait`` ends it as ``ChatClient/ExitStatus/serverUnavailable``).
    private func finishIfDone() {
        guard version == .v2, inputHasEnded, loggedIn, !draining, !finished, outboxCount() == 0 else { return }
        draining = true
        link?.disconnectAfterSending()
    }

    private func restartWaitTimer() {
        waitTimer?.cancel()
        waitTimer = loop.scheduleTask(in: wait) { [self] in
            queue.async { self.waitExpired() }
        }
    }

    private func waitExpired() {
        guard !finished else { return }
        waitTimer = nil
        let left = outboxCount()
        if version == .v2 && left == 0 && loggedIn {
            link?.disconnect()
            finish(.quit)
            return
        }
        let what = connected ? "no answer from the server" : "server unreachable"
        if version == .v2 && left == 0 {
            say("! \(connected ? "not logged in" : "server unreachable") after \(Self.seconds(wait)) s; leaving")
        } else if version == .v2 {
            say("! \(what) for \(Self.seconds(wait)) s: \(Self.messages(left)) still in the outbox, kept for the next start")
        } else {
            say("! \(what) for \(Self.seconds(wait)) s; leaving")
        }
        link?.disconnect()
        finish(.serverUnavailable)
    }

    private func reportOutboxLeft() {
        let left = outboxCount()
        if left > 0 { say("! \(Self.messages(left)) still in the outbox, kept for the next start") }
    }

    private func outboxCount() -> Int { link?.deliveryStatus?.outboxCount ?? 0 }

    /// Ends the session with `status`; a clean end after a failure is ``ChatClient/ExitStatus/completedWithErrors``.
    private func finish(_ status: ChatClient.ExitStatus) {
        guard !finished else { return }
        updateStatus { $0.connection = .offline }
        finished = true
        waitTimer?.cancel()
        waitTimer = nil
        onFinish(status == .quit && failed ? .completedWithErrors : status)
        afterFinish?()
    }

    // MARK: Text

    /// "1 message", "3 messages".
    static func messages(_ count: Int) -> String { count == 1 ? "1 message" : "\(count) messages" }

    /// Whole seconds when whole ("30"), else to the millisecond ("0.5").
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }

    /// `duration` in seconds, for dates.
    static func interval(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whether an error with `code` counts as a failure for the exit status (4): a message refused for
    /// good (``ChatErrorCode/refusesForGood``), a command the server could not do
    /// (`historyUnavailable`, `alreadyLoggedIn`) and a frame it could not read (`protocolError`). Not
    /// the login's refusals, which end the session with a status of their own (`nameTaken`,
    /// `invalidName`, `badPassword`), nor any answer the client rides out: it reconnects, waits or
    /// resends, and the message stays in the outbox until stored (`throttled`, `storeUnavailable`,
    /// `replaced`, `notLoggedIn`, `serverFull`, `rateLimited`, `loginTimeout`, `frameTimeout`,
    /// `serverShuttingDown`). An outage the client came through is no failure of the user's messages.
    static func isFailure(_ code: ChatErrorCode) -> Bool {
        switch code {
        case .unknownRecipient, .badRequest, .messageTooLong, .historyUnavailable, .alreadyLoggedIn, .protocolError:
            return true
        case .nameTaken, .invalidName, .badPassword, .throttled, .storeUnavailable, .replaced, .notLoggedIn, .serverFull,
            .rateLimited, .loginTimeout, .frameTimeout, .serverShuttingDown:
            return false
        }
    }

    /// "bob, cy and 3 more", or "nobody else" (names as ``ChatLines/shown(_:)`` shows them).
    func list(_ online: [String], _ count: Int) -> String {
        var list = online.isEmpty ? "nobody else" : online.map(lines.shown).joined(separator: ", ")
        if count > online.count { list += " and \(count - online.count) more" }
        return list
    }
}
