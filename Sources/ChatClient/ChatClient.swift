import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketFraming

/// The instant-messaging client behind `im-client`: logs in by name, turns typed lines
/// (``ChatCommand``) into messages, and turns everything that happens (messages, receipts, presence,
/// drops, reconnect attempts and their outcomes) into lines of text for a terminal or a script
/// (``OutputStyle``; ``ClientOptions/help`` lists the lines).
///
/// With protocol version 2 (the default) every message typed gets an id and stays in an outbox on
/// disk (``ChatClientState``, in ``Configuration/dataDirectory``) until the server has stored it, and
/// is resent after every reconnect, also by the next client started with the same data directory
/// after this one was killed; deliveries are shown once and acknowledged; the client never gives up
/// reconnecting on its own. With version 1 it is the live-only client it always was.
///
/// Threading: methods may be called from any thread (``handle(line:)`` blocks until the message is
/// persisted in the outbox). Output lines go to `output`, status changes (``Status``) to `onStatus`
/// and the end of the session to `onFinish`, all on the client's own serial queue, in order;
/// `onFinish` is called once.
///
/// Exit statuses (``ExitStatus``): 0 after the input ended and everything was stored, 1 when the
/// server could not be reached within ``Configuration/wait`` (or, with ``ReconnectPolicy/giveUp``,
/// when the attempts ran out), 2 when the server refused the name or password, 4 when the session
/// ended as for 0 but a message was refused or a command failed.
public final class ChatClient: Sendable {
    private let queue: DispatchQueue
    private let link: LongLinkClient<ChatCodec>
    private let presenter: ChatPresenter
    private let inputEnded = LockedValue(false)
    /// The client itself from ``start()`` until the session ends (``stop()`` or `onFinish`): a client
    /// whose creator let go of it (`im-client`'s input thread, once the input ended) goes on until its
    /// outbox is stored, with its files open.
    private let running = LockedValue<ChatClient?>(nil)
    /// The name logged in with.
    public let name: String
    /// The protocol version spoken.
    public let protocolVersion: ChatProtocolVersion
    /// Version 2: the client's files (outbox, positions, sent messages); `nil` for version 1.
    public let state: ChatClientState?

    /// A client as `configuration` describes, not yet connected (``start()``).
    ///
    /// - Parameters:
    ///   - group: the loops the connection and the client's timers run on (its clock measures
    ///     ``Configuration/wait`` and the reconnect delays).
    ///   - output: receives each line, on the client's queue.
    ///   - onStatus: receives the status (``Status``) at ``start()`` and whenever it changes, on the
    ///     client's queue, in order with the lines; `nil` (the default): the status is not followed
    ///     (nor the outbox counted after each message).
    ///   - onFinish: receives the end of the session, once, on the client's queue.
    /// - Throws: version 2 only: ``ChatClientStateError`` (no data directory, cannot create it, another
    ///   client uses the same files), ``SQLiteError`` / ``StoreError`` from the files,
    ///   `LongLink.DeliveryStoreError` for an outbox entry that does not decode.
    public convenience init(
        configuration: Configuration,
        group: EventLoopGroup = .shared,
        output: @escaping @Sendable (String) -> Void,
        onStatus: (@Sendable (Status) -> Void)? = nil,
        onFinish: @escaping @Sendable (ExitStatus) -> Void
    ) throws {
        let queue = DispatchQueue(label: "IMChat.ChatClient")
        var linkConfiguration = LongLinkClient<ChatCodec>.Configuration(endpoints: configuration.endpoints)
        linkConfiguration.tls = configuration.tls
        linkConfiguration.heartbeatInterval = configuration.heartbeat
        linkConfiguration.smartHeartbeat = configuration.smartHeartbeat
        linkConfiguration.reconnectSchedule = configuration.reconnectSchedule
        linkConfiguration.reconnectPolicy = configuration.reconnectPolicy
        guard configuration.protocolVersion == .v2 else {
            let presenter = ChatPresenter(
                configuration: configuration, sentLog: nil, group: group, queue: queue, output: output,
                onStatus: onStatus, onFinish: onFinish)
            let link = LongLinkClient(codec: ChatCodec(), configuration: linkConfiguration, group: group, eventQueue: queue) {
                presenter.handle($0)
            }
            self.init(name: configuration.name, version: .v1, state: nil, queue: queue, link: link, presenter: presenter)
            return
        }
        guard let directory = configuration.dataDirectory ?? ChatClientState.defaultDirectory() else {
            throw ChatClientStateError.noDataDirectory
        }
        let state = try ChatClientState(
            directory: directory, name: configuration.name, host: configuration.host,
            port: configuration.port)
        linkConfiguration.reportsStoredAnswers = true
        let presenter = ChatPresenter(
            configuration: configuration, sentLog: state.sentLog, group: group, queue: queue, output: output,
            onStatus: onStatus, onFinish: onFinish)
        let link = try LongLinkClient(
            codec: ChatCodec(version: .v2), configuration: linkConfiguration, store: state.deliveryStore,
            group: group, eventQueue: queue
        ) { presenter.handle($0) }
        let login = ChatLogin(
            name: configuration.name, password: configuration.password,
            clientInstance: state.deliveryStore.clientInstance)
        presenter.login = login
        link.greetingBuilder = { positions in login.message(positions: positions) }
        self.init(name: configuration.name, version: .v2, state: state, queue: queue, link: link, presenter: presenter)
    }

    /// A version 1 client (live messages only, no files) for `name` that will connect to `host`:`port`,
    /// send a heartbeat every `heartbeat`, retry after `reconnectDelays` (each plus up to 1 s of jitter)
    /// and then give up (``ExitStatus/serverUnavailable``), as `im-client --protocol 1` did before
    /// version 2. Lines as for ``OutputStyle/pipe``; `output` and `onFinish` run on the client's queue.
    public convenience init(
        name: String,
        host: String,
        port: UInt16,
        heartbeat: Duration = .seconds(180),
        reconnectDelays: [Duration] = ReconnectSchedule.articleDelays,
        group: EventLoopGroup = .shared,
        output: @escaping @Sendable (String) -> Void,
        onFinish: @escaping @Sendable (ExitStatus) -> Void
    ) {
        var configuration = Configuration(name: name, host: host, port: port)
        configuration.protocolVersion = .v1
        configuration.heartbeat = heartbeat
        configuration.reconnectSchedule = ReconnectSchedule(delays: reconnectDelays)
        configuration.reconnectPolicy = .giveUp
        let queue = DispatchQueue(label: "IMChat.ChatClient")
        var linkConfiguration = LongLinkClient<ChatCodec>.Configuration(host: host, port: port)
        linkConfiguration.heartbeatInterval = heartbeat
        linkConfiguration.reconnectSchedule = configuration.reconnectSchedule
        linkConfiguration.reconnectPolicy = .giveUp
        let presenter = ChatPresenter(
            configuration: configuration, sentLog: nil, group: group, queue: queue, output: output,
            onFinish: onFinish)
        let link = LongLinkClient(codec: ChatCodec(), configuration: linkConfiguration, group: group, eventQueue: queue) {
            presenter.handle($0)
        }
        self.init(name: name, version: .v1, state: nil, queue: queue, link: link, presenter: presenter)
    }

    private init(
        name: String, version: ChatProtocolVersion, state: ChatClientState?, queue: DispatchQueue,
        link: LongLinkClient<ChatCodec>, presenter: ChatPresenter
    ) {
        self.name = name
        protocolVersion = version
        self.state = state
        self.queue = queue
        self.link = link
        self.presenter = presenter
        queue.setSpecific(key: ChatClient.queueKey, value: true)
        presenter.link = link
        presenter.afterFinish = { [running] in running.withLock { $0 = nil } }
        if version == .v1 { link.greeting = .login(name: name, resumeToken: nil) }
    }

    /// Connects and logs in; reconnects by itself after drops. Version 2: first says how many messages
    /// an earlier run left in the outbox (they are resent after the login).
    public func start() {
        running.withLock { $0 = self }
        let status = link.deliveryStatus
        let earlier = earlierOutbox()
        queue.async { [presenter] in presenter.starting(status, earlier: earlier) }
        link.connect()
    }

    /// The messages in the outbox file when the client was made (an earlier run's), decoded; entries
    /// that do not decode are left out (the link refuses to start with those anyway).
    private func earlierOutbox() -> [(id: UInt64, message: ChatMessage)] {
        guard let state, let entries = try? state.deliveryStore.load().outbox else { return [] }
        let codec = ChatCodec(version: .v2)
        return entries.compactMap { entry in
            var decoder = codec.makeDecoder()
            var buffer = FrameBuffer()
            buffer.append(entry.frame)
            guard let frame = try? decoder.decode(&buffer), let message = try? codec.message(from: frame) else { return nil }
            return (entry.id, message)
        }
    }

    /// Acts on one typed line. Lines after `/quit` or ``finishInput()`` are ignored. Version 2: a
    /// message is in the outbox (on disk) when this returns, and is shown with its id.
    public func handle(line: String) {
        guard !inputEnded.withLock({ $0 }) else { return }
        switch ChatCommand.parse(line) {
        case .direct(let to, let text): send(.directMessage(to: to, text: text))
        case .broadcast(let text): send(.broadcast(text: text))
        case .history(let other, let limit): requestHistory(with: other, limit: limit)
        case .who(let more): requestWho(more: more)
        case .listCommands: say(ChatCommand.help)
        case .quit: finishInput()
        case .nothing: break
        case .invalid(let help): fail(help)
        }
    }

    /// The input has ended (end of file, or `/quit`): send what is queued and wait for the server's
    /// answers. Returns once the wait has started (it waits for the client's queue). Version 2: the session ends (status 0) once the outbox is empty, every message stored
    /// or refused, or (status 1) when ``Configuration/wait`` passes without any being stored; the
    /// messages left stay in the outbox for the next start. Version 1: waits briefly for the server's
    /// replies (errors included), then disconnects cleanly.
    public func finishInput() {
        let first = inputEnded.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        onQueueAndWait { [presenter] in presenter.inputEnded() }
    }

    /// Runs `body` on the client's queue and waits for it (inline when already there).
    private func onQueueAndWait(_ body: () -> Void) {
        if DispatchQueue.getSpecific(key: ChatClient.queueKey) != nil {
            body()
        } else {
            queue.sync(execute: body)
        }
    }

    /// Marks the clients' queues, so a call made on one runs inline instead of waiting for itself.
    private static let queueKey = DispatchSpecificKey<Bool>()

    /// Stops at once, as if the process were killed: disconnects without waiting and closes the files
    /// (what the server has not stored stays in the outbox). `onFinish` is not called; no more lines
    /// are written. Waits for the client's queue (inline when called on it).
    public func stop() {
        inputEnded.withLock { $0 = true }
        onQueueAndWait { presenter.abandon() }
        link.disconnect()
        state?.close()
        running.withLock { $0 = nil }
    }

    /// Version 2: the delivery state now (outbox count, positions, counters); `nil` for version 1.
    /// Waits for the link's event loop.
    public var deliveryStatus: DeliveryStatus? { link.deliveryStatus }

    private func send(_ message: ChatMessage) {
        // Refused here rather than by the server (`messageTooLong`) or by the frame limit, with the figures.
        if case .directMessage(_, let text) = message, let line = Self.tooLong(text) { return fail(line) }
        if case .broadcast(let text) = message, let line = Self.tooLong(text) { return fail(line) }
        guard protocolVersion == .v2 else {
            onQueueAndWait { [link, presenter] in
                presenter.sent(message)
                link.send(message)
            }
            return
        }
        // Sent from the client's queue, so the link's answer (an event queued behind) cannot be shown
        // before the message itself. The link never waits for this queue.
        onQueueAndWait { [link, presenter] in
            guard let id = link.send(message) else { return }
            presenter.accepted(id: id, message: message)
        }
    }

    /// "not sent: the text is 70000 bytes as sent (JSON); at most 65000", or `nil` when `text` is
    /// within ``ChatCodec/maxTextBytes``.
    static func tooLong(_ text: String) -> String? {
        let bytes = ChatCodec.jsonTextBytes(text)
        guard bytes > ChatCodec.maxTextBytes else { return nil }
        return "not sent: the text is \(bytes) bytes as sent (JSON); at most \(ChatCodec.maxTextBytes)"
    }

    private func requestHistory(with other: String?, limit: Int) {
        guard protocolVersion == .v2 else {
            fail("/history needs protocol version 2 (--protocol 2, the default)")
            return
        }
        let conversation = other.map { ConversationID(between: name, and: $0) } ?? .room
        link.send(.v2(.historyRequest(conversation: conversation.description, limit: limit)))
    }

    /// Sends a `who` for the first page, or (`more`) for the page after the last one shown.
    private func requestWho(more: Bool) {
        guard protocolVersion == .v2 else {
            fail("/who needs protocol version 2 (--protocol 2, the default)")
            return
        }
        onQueueAndWait { [link, presenter] in
            guard let request = presenter.whoRequest(more: more) else { return }
            link.send(request)
        }
    }

    private func say(_ line: String) {
        queue.async { [presenter] in presenter.say(line) }
    }

    /// Says `line` as an error (`! line`); the session's clean end becomes ``ExitStatus/completedWithErrors``.
    private func fail(_ line: String) {
        queue.async { [presenter] in presenter.fail(line) }
    }
}

/// The version 2 login, rebuilt on every connect from the positions and the latest resume token.
final class ChatLogin: Sendable {
    let name: String
    let password: String?
    let clientInstance: String
    private let token = LockedValue<String?>(nil)

    init(name: String, password: String?, clientInstance: String) {
        self.name = name
        self.password = password
        self.clientInstance = clientInstance
    }

    /// Records the resume token of the latest login accepted.
    func update(token: String) { self.token.withLock { $0 = token } }

    /// The login reporting `positions` and asking for presence as `presenceChanges` batches; beyond ``ChatCodec/maxPositions`` conversations, those with the
    /// lowest positions are left out (the server then starts them where this user acknowledged last).
    func message(positions: DeliveryPositions) -> ChatMessage {
        var reported = positions
        if reported.count > ChatCodec.maxPositions {
            let kept = reported.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
                .prefix(ChatCodec.maxPositions)
            reported = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
        return .v2(
            .login(
                name: name, password: password, resumeToken: token.withLock { $0 }, clientInstance: clientInstance,
                positions: reported, presenceChanges: true))
    }
}
