import AsyncSocket
import Foundation

/// The link's behaviour as a value: inputs in (``LinkInput``: the app's calls, the socket's callbacks,
/// timers, store answers), actions out (``LinkAction``: connect, write, close, schedule, emit,
/// persist). It opens no socket, starts no timer and touches no queue; ``LongLinkClient`` is the
/// driver that does, on the link's event loop (see the LinkStateMachine article).
///
/// The machine owns the helpers whose logic it follows: the ``ReconnectSchedule``, the
/// ``EndpointRotation``, the smart heartbeat's learner (``SmartHeartbeatDriver``) and reliable
/// delivery's outbox and positions (``ReliableDelivery``, whose store calls the driver makes).
struct LinkMachine<Codec: LinkCodec> {
    let codec: Codec
    let configuration: LongLinkClient<Codec>.Configuration
    /// ``LongLinkClient/Configuration/smartHeartbeat``'s state; `nil` with the fixed heartbeat.
    let smart: SmartHeartbeatDriver?
    /// Reliable delivery's state; `nil` on a plain link.
    let delivery: ReliableDelivery<Codec.Message>?
    /// Where the link is, with that state's data.
    private(set) var state = LinkState<Codec>.idle
    var schedule: ReconnectSchedule
    /// The endpoint of the current (or next) connect attempt.
    private(set) var rotation: EndpointRotation
    /// Messages waiting for a connection (the offline queue), oldest first.
    private(set) var queued: [Codec.Message] = []
    /// The app asked to close after sending.
    private(set) var closeWhenDrained = false
    private var nextTag = 0
    /// The loop's clock (ns) for the input being handled; the driver sets it before each input.
    var now: UInt64 = 0
    /// The actions of the input being handled.
    private var actions: [LinkAction<Codec>] = []

    /// The tag of writes that are not app messages (heartbeats, the greeting, acknowledgements, outbox frames).
    static var controlTag: Int { -1 }

    init(
        codec: Codec, configuration: LongLinkClient<Codec>.Configuration, smart: SmartHeartbeatDriver?,
        delivery: ReliableDelivery<Codec.Message>?
    ) {
        self.codec = codec
        self.configuration = configuration
        self.smart = smart
        self.delivery = delivery
        schedule = configuration.reconnectSchedule
        schedule.policy =
            configuration.reconnectPolicy ?? (delivery != nil ? .keepTrying() : configuration.reconnectSchedule.policy)
        rotation = EndpointRotation(configuration.endpoints)
    }

    /// True once this side has decided to end the connection (its reason is set): the driver stops
    /// handing on the frames of that read, and the machine ignores any that come.
    var isDropping: Bool {
        if case .connected(let connection) = state { connection.dropReason != nil } else { false }
    }

    /// The interval heartbeats go out at now.
    var heartbeatInterval: Duration { smart?.interval ?? configuration.heartbeatInterval }

    /// Handles one input; returns what the driver must do, in order.
    mutating func handle(_ input: LinkInput<Codec>) -> [LinkAction<Codec>] {
        switch input {
        case .connect: connect()
        case .disconnect: disconnect()
        case .disconnectAfterSending: disconnectAfterSending()
        case .send(let message): sendPlain(message)
        case .admitted(let id, let frame, let message):
            delivery?.append(id: id, frame: frame, message: message)
            pumpOutbox()
        case .sendRejected(let message, let failure):
            if case .storeFailed(let why) = failure { delivery?.noteStoreFailures([why]) }
            emit(.sendFailed(message, failure))
        case .socketConnected(let host, let port, let greeting): connected(host: host, port: port, greeting: greeting)
        case .connectFailed(let error): connectFailed(error)
        case .socketDisconnected(let error): disconnected(error)
        case .secured(let version, let reused): emit(.secured(protocolVersion: version, isSessionReused: reused))
        case .frame(let frame): received(frame)
        case .written(let tag): modifyConnection { $0.inflight.written(upTo: tag) }
        case .writeQueueFull: modifyConnection { $0.sendPaused = true }
        case .writeQueueDrained: resumeSending()
        case .timerFired(let timer): fired(timer)
        case .networkChanged(let reportedByApp): networkMayHaveChanged(reportedByApp: reportedByApp)
        case .flushDue: takeFlush()
        case .persisted(let result, let then): persisted(result, then: then)
        }
        var result: [LinkAction<Codec>] = []
        swap(&result, &actions)
        return result
    }

    // MARK: The app's calls

    private mutating func connect() {
        switch state {
        case .idle, .unavailable: break
        default: return
        }
        actions.append(.watchNetwork)
        schedule.reset()
        rotation.restart()
        closeWhenDrained = false
        attempt()
    }

    private mutating func disconnect() {
        let wasActive = !state.isIdle
        stop()
        state = .idle
        if wasActive { emit(.disconnected(.byUser)) }
    }

    private mutating func disconnectAfterSending() {
        closeWhenDrained = true
        switch state {
        case .connected:
            startDrain()
        case .idle, .unavailable:
            failQueued()
            let wasActive = !state.isIdle
            state = .idle
            if wasActive { emit(.disconnected(.byUser)) }
        case .connecting, .waitingToReconnect:
            break
        }
    }

    private mutating func sendPlain(_ message: Codec.Message) {
        if case .connected(let connection) = state, !closeWhenDrained, !connection.sendPaused {
            write(message)
        } else if queued.count >= configuration.offlineQueueLimit {
            emit(.sendFailed(message, .queueFull))
        } else {
            queued.append(message)
        }
    }

    // MARK: Connecting

    private mutating func attempt() {
        guard let endpoint = rotation.current else {
            state = .unavailable
            emit(.connectFailed(.badConfig("no endpoint to connect to (Configuration.endpoints is empty)")))
            emit(.serverUnavailable)
            if closeWhenDrained { failQueued() }
            return
        }
        state = .connecting(endpoint: endpoint)
        actions.append(.connect(endpoint, timeout: configuration.connectTimeout))
    }

    private mutating func connectFailed(_ error: SocketError) {
        emit(.connectFailed(error))
        scheduleReconnect()
    }

    /// After a failed connect or an unrequested drop: the next attempt, to the next endpoint, on the
    /// schedule (or the report that the server is unavailable).
    private mutating func scheduleReconnect() {
        rotation.advance()
        let exhausted = schedule.shouldReportUnavailable
        // Keeping on trying stops when the app asked to close after sending: nothing more to wait for.
        let next = exhausted && closeWhenDrained ? nil : schedule.next()
        guard let (attempt, delay) = next else {
            state = .unavailable
            emit(.serverUnavailable)
            if closeWhenDrained { failQueued() }
            return
        }
        // Keeping on trying: said once, when the schedule's own attempts have run out.
        if exhausted { emit(.serverUnavailable) }
        state = .waitingToReconnect(attempt: attempt, delay: delay)
        actions.append(.schedule(.reconnect, after: delay))
        emit(.reconnecting(attempt: attempt, delay: delay, endpoint: rotation.announced))
    }

    /// After a network change: attempt 1 of a fresh schedule, now, to the same endpoint.
    mutating func reconnectAtOnce() {
        actions.append(.cancel(.reconnect))
        schedule.reset()
        let number = schedule.next()?.attempt ?? 1
        state = .waitingToReconnect(attempt: number, delay: .zero)
        emit(.reconnecting(attempt: number, delay: .zero, endpoint: rotation.announced))
        attempt()
    }

    private mutating func fired(_ timer: LinkTimer) {
        switch timer {
        case .reconnect:
            guard case .waitingToReconnect = state else { return }
            attempt()
        case .heartbeat: heartbeatDue()
        case .acknowledgement: acknowledgementOverdue()
        case .healthy:
            guard state.isConnected else { return }
            schedule.reset()
        case .retry: pauseEnded()
        case .drain: finishDrain()
        }
    }

    // MARK: Disconnecting

    private mutating func disconnected(_ error: SocketError?) {
        let connection: LinkConnection<Codec>
        switch state {
        case .connected(let current): connection = current
        case .connecting:
            endConnection(nil)
            connectFailed(error ?? .connectTimeout)
            return
        default: return
        }
        endConnection(connection)
        let reason: LongLinkClient<Codec>.DisconnectReason
        switch error {
        case nil: reason = connection.dropReason ?? .byUser
        case .closedByPeer?: reason = connection.dropReason ?? .byServer
        case .decodingFailed(let failure)?: reason = connection.dropReason ?? .protocolError("\(failure)")
        case let error?: reason = connection.dropReason ?? .network(error)
        }
        if let smart { connectionLost(reason, smart) }
        emit(.disconnected(reason))
        if reason == .networkChanged {
            reconnectAtOnce()
        } else if reason == .byUser {
            state = .idle
            if closeWhenDrained { failQueued() }
        } else {
            scheduleReconnect()
        }
    }

    /// The socket is gone: the connection's timers stop, its unwritten messages go back to the front
    /// of the queue, and reliable delivery resends what is unanswered on the next one.
    private mutating func endConnection(_ connection: LinkConnection<Codec>?) {
        stopConnectionTimers()
        if var connection {
            state = .idle  // the connection's writes now belong to `connection` alone
            requeue(connection.inflight.takeUnwritten())
        }
        delivery?.connectionEnded()
    }

    /// Cancels timers and drops the socket without reporting anything; keeps unsent messages queued.
    mutating func stop() {
        flushDelivery(then: .countFailures)
        actions.append(.cancel(.reconnect))
        switch state {
        case .connected, .connecting: actions.append(.abandonSocket)
        default: break
        }
        if case .connected(let connection) = state { endConnection(connection) } else { endConnection(nil) }
    }

    /// Puts messages a dropped connection never finished writing back at the front of the queue.
    private mutating func requeue(_ unwritten: [Codec.Message]) {
        guard !unwritten.isEmpty else { return }
        queued.insert(contentsOf: unwritten, at: 0)
        while queued.count > configuration.offlineQueueLimit {
            emit(.sendFailed(queued.removeLast(), .queueFull))
        }
    }

    private mutating func failQueued() {
        let failed = queued
        queued.removeAll()
        for message in failed { emit(.sendFailed(message, .linkClosed)) }
    }

    // MARK: Plumbing

    /// Runs `body` on the connection's state, when connected.
    mutating func modifyConnection(_ body: (inout LinkConnection<Codec>) -> Void) {
        guard case .connected(var connection) = state else { return }
        state = .idle  // so that `connection` holds the only reference to its buffers
        body(&connection)
        state = .connected(connection)
    }

    /// The connection's state, when connected.
    var connection: LinkConnection<Codec>? {
        if case .connected(let connection) = state { connection } else { nil }
    }

    mutating func emit(_ event: LongLinkClient<Codec>.Event) { actions.append(.emit(event)) }

    mutating func perform(_ action: LinkAction<Codec>) { actions.append(action) }

    /// Moves to `state` (the connected state's methods use it).
    mutating func enter(_ state: LinkState<Codec>) { self.state = state }

    /// Takes the offline queue (to write it).
    mutating func takeQueued() -> [Codec.Message] {
        defer { queued.removeAll() }
        return queued
    }

    /// The next tag for an app message's write.
    mutating func makeTag() -> Int {
        nextTag += 1
        return nextTag
    }
}
