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
    let sentLog: SentMessageLog?
    let queue: DispatchQueue
    /// What the configuration and the client fixed for the whole session.
    let settings: Settings
    var link: LongLinkClient<ChatCodec>?
    var login: ChatLogin?
    /// Called on the client's queue after `onFinish` (the client lets go of itself there).
    var afterFinish: (@Sendable () -> Void)?
    /// Where the session stands.
    var session = Session()
    /// What is remembered to show each thing once, and `/who` paging.
    var memory = Memory()
    /// Something failed along the way (a message refused, an error from the server, a command not
    /// understood): a clean end is ``ChatClient/ExitStatus/completedWithErrors`` rather than `quit`.
    var failed = false
    /// What ``Settings/onStatus`` was last told.
    private(set) var status: ChatClient.Status

    /// What the configuration and the client fixed for the whole session.
    struct Settings {
        let version: ChatProtocolVersion
        let keepsTrying: Bool
        let wait: Duration
        /// The wall clock of the lines' times and the status's reconnect times.
        let now: @Sendable () -> Date
        /// The loop whose clock times ``ChatClient/Configuration/wait`` and throttling delays.
        let loop: EventLoop
        let output: @Sendable (String) -> Void
        let onStatus: (@Sendable (ChatClient.Status) -> Void)?
        let onFinish: @Sendable (ChatClient.ExitStatus) -> Void
    }

    /// Where the session stands: the connection, the login, the input, the end.
    struct Session {
        /// The reconnect attempt in progress, if any.
        var attempt: Int?
        var finished = false
        var refusal: ChatClient.ExitStatus?
        /// After a login answered `throttled` or `storeUnavailable`: why, and how long until reconnecting.
        var loginRetry: (reason: String, delay: Duration)?
        var connected = false
        /// Logged in on the current connection (version 2: what is sent after the input ends is answered).
        var loggedIn = false
        var inputHasEnded = false
        /// Input ended and the outbox is empty: closing after the last answers.
        var draining = false
        var waitTimer: Scheduled?
        /// A `rateLimited` answer has been shown and the outbox has not been empty since: the next ones
        /// are not shown (the link resends them, one at a time).
        var slowedDown = false
    }

    /// What the presenter remembers to show each thing once: own messages, the sent-message log's
    /// health, `/who` paging.
    struct Memory {
        /// The `stored` answer just passed on, for the ``LongLinkClient/Event/stored(id:_:)`` that follows.
        var lastAnswer: (id: UInt64, sequence: UInt64?)?
        /// Own messages in the outbox (this run's and an earlier run's) by id: their conversation and
        /// text, to recognise them when the server delivers them back before answering `stored` (after a
        /// restart, the login's backlog comes before the answers to the resent messages).
        var unanswered: [UInt64: (conversation: String, text: String)] = [:]
        var sentLogFailed = false
        /// `/who` paging: the last name of the latest page shown, and whether names follow it.
        var whoCursor: String?
        var whoHasMore = false
    }

    init(
        configuration: ChatClient.Configuration, sentLog: SentMessageLog?, group: EventLoopGroup, queue: DispatchQueue,
        output: @escaping @Sendable (String) -> Void, onStatus: (@Sendable (ChatClient.Status) -> Void)? = nil,
        onFinish: @escaping @Sendable (ChatClient.ExitStatus) -> Void
    ) {
        lines = ChatLines(
            style: configuration.style, me: configuration.name, color: configuration.color,
            timestamps: configuration.timestamps, timeZone: configuration.timeZone)
        status = ChatClient.Status(
            connecting: configuration.host, port: configuration.port,
            outboxCount: configuration.protocolVersion == .v2 ? 0 : nil)
        status.heartbeatInterval = configuration.smartHeartbeat?.minimum
        let keepsTrying: Bool
        if case .keepTrying = configuration.reconnectPolicy { keepsTrying = true } else { keepsTrying = false }
        settings = Settings(
            version: configuration.protocolVersion, keepsTrying: keepsTrying, wait: configuration.wait,
            now: configuration.clock, loop: group.next(), output: output, onStatus: onStatus, onFinish: onFinish)
        self.sentLog = sentLog
        self.queue = queue
    }

    // MARK: Calls from ChatClient (on the queue)

    /// Writes `line`, stamped (``ChatLines/stamped(_:at:entry:)``; `entry`: a line of a history).
    func say(_ line: String, entry: Bool = false) {
        guard !session.finished else { return }
        settings.output(lines.stamped(line, at: settings.now(), entry: entry))
    }

    /// Writes `line` as an error (`! line`) and remembers that something failed.
    func fail(_ line: String) {
        failed = true
        say("! " + line)
    }

    /// Changes the status; tells ``onStatus`` when it changed.
    func updateStatus(_ change: (inout ChatClient.Status) -> Void) {
        var new = status
        change(&new)
        guard new != status else { return }
        status = new
        if !session.finished { settings.onStatus?(new) }
    }

    /// Version 2: the status's outbox count, moved by `change` as messages enter it (accepted) and
    /// leave it (stored, refused), in the order the events are shown (the link's own count may be
    /// ahead of them).
    func countOutbox(_ change: Int) {
        guard settings.version == .v2 else { return }
        updateStatus { $0.outboxCount = max(($0.outboxCount ?? 0) + change, 0) }
        if status.outboxCount == 0 { session.slowedDown = false }
    }

    /// Before connecting: version 2 counts what an earlier run left in the outbox (`earlier`: those
    /// messages, by id).
    func starting(_ delivery: DeliveryStatus?, earlier: [(id: UInt64, message: ChatMessage)]) {
        settings.onStatus?(status)
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
        guard memory.whoHasMore, let whoCursor = memory.whoCursor else {
            say(lines.noMoreOnline())
            return nil
        }
        return .v2(.who(after: whoCursor, limit: ChatCodec.maxWhoLimit))
    }

    func inputEnded() {
        guard !session.finished else { return }
        session.inputHasEnded = true
        updateStatus { $0.inputEnded = true }
        restartWaitTimer()
        if settings.version == .v1 {
            link?.disconnectAfterSending()
        } else {
            finishIfDone()
        }
    }

    /// ``ChatClient/stop()``: nothing more is shown or reported.
    func abandon() {
        session.finished = true
        session.waitTimer?.cancel()
        session.waitTimer = nil
    }

    // MARK: Link events

    func handle(_ event: LongLinkClient<ChatCodec>.Event) {
        guard !session.finished else { return }
        if let refusal = session.refusal {
            // The login was refused: whatever the link says next, the session ends.
            guard case .disconnected = event else { return }
            say("* disconnected (login refused)")
            reportOutboxLeft()
            finish(refusal)
            return
        }
        switch event {
        case .connected(let host, let port):
            session.connected = true
            let server = Endpoint(host: host, port: port)
            if let attempt = session.attempt {
                say("* reconnect attempt \(attempt): connected to \(server)")
            } else {
                say("* connected to \(server)")
            }
            session.attempt = nil
            updateStatus { $0.connection = .loggingIn(name: lines.me) }
        case .secured:
            break  // `--tls` asked for it; a failed handshake is reported as the disconnect's reason
        case .connectFailed(let error):
            if let attempt = session.attempt {
                say("* reconnect attempt \(attempt) failed: \(error)")
            } else {
                say("* connect failed: \(error)")
            }
        case .reconnecting(let attempt, let delay, _):  // the line (the event's description) names the endpoint
            session.attempt = attempt
            let time = settings.now()
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
            if session.draining {
                finish(.quit)  // everything was stored; only the goodbye could not be said
            } else if settings.keepsTrying && !(settings.version == .v1 && session.inputHasEnded) {
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
            memory.unanswered[id] = nil
            let live = memory.lastAnswer?.id == id && memory.lastAnswer?.sequence == nil
            memory.lastAnswer = nil
            say(lines.stored(id: id, live: live))
            countOutbox(-1)
            progressed()
        case .refused(let id, _):
            memory.unanswered[id] = nil
            failed = true
            say(lines.refused(id: id))
            countOutbox(-1)
            progressed()
        case .sendFailed(let message, let reason):
            fail("not sent (\(reason)): \(message.description.terminalSafe)")
        }
    }

    func disconnected(_ reason: LongLinkClient<ChatCodec>.DisconnectReason) {
        session.connected = false
        session.loggedIn = false
        if reason == .byUser, let (why, delay) = session.loginRetry, let link {
            session.loginRetry = nil
            say("* disconnected (\(why)); trying again in \(Self.seconds(delay)) s")
            let at = settings.now().addingTimeInterval(Self.interval(delay))
            updateStatus { $0.connection = .reconnecting(attempt: nil, at: at) }
            settings.loop.scheduleTask(in: delay) { link.connect() }
            return
        }
        say("* disconnected (\(reason))")
        guard reason == .byUser else { return }
        updateStatus { $0.connection = .offline }
        let left = outboxCount()
        if left > 0 { reportOutboxLeft() }
        finish(left > 0 ? .serverUnavailable : .quit)
    }
}
