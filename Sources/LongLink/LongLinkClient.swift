import AsyncSocket
import Dispatch
import FramedSocket
import Foundation
import SocketFraming
import SocketLog

/// The client side of a long-lived connection, doing what every app built on GCDAsyncSocket writes by
/// hand (the articles' singleton "long connection manager"): framing, a heartbeat while connected, a
/// dead-link check, reconnecting after drops it did not ask for, and a bounded queue of messages sent
/// while offline.
///
/// ```swift
/// let link = LongLinkClient(codec: ChatCodec(), configuration: .init(host: "chat.example", port: 7000),
///                           eventQueue: .main) { event in print(event) }
/// link.greeting = .login(name: "ann")      // sent first on every (re)connect
/// link.connect()
/// link.send(.broadcast(text: "hi"))        // queued until connected
/// ```
///
/// **Reliable delivery** (issue 11), with a ``ReliableLinkCodec`` and a ``DeliveryStateStore``:
///
/// ```swift
/// let store = InMemoryDeliveryStateStore()        // or a store that persists to disk
/// let link = try LongLinkClient(codec: codec, configuration: .init(host: "chat.example", port: 7000),
///                               store: store, eventQueue: .main) { event in
///     switch event {
///     case .stored(let id, _): print("✓ \(id)")  // durable on the server; left the outbox
///     case .received(let message): show(message)  // each delivery once, in order
///     default: print(event)
///     }
/// }
/// link.greetingBuilder = { positions in codec.login(name: "ann", positions: positions) }
/// link.connect()
/// let id = link.send(message)                     // persisted before send returns; resent until stored
/// ```
///
/// Every numbered message stays in the outbox (bounded by ``Configuration/outboxLimit``, 10,000) until
/// the server answers stored or refused; on every connect the greeting (built from the positions) goes
/// first, then the unanswered messages in id order, then new ones, at most
/// ``Configuration/unacknowledgedWindow`` (256) unanswered at a time. Deliveries are passed on once and
/// in order per conversation; duplicates are dropped and acknowledged again; an early delivery (a gap)
/// is dropped and the link reconnects so the server resends from the position. Acknowledgements are
/// cumulative and batched: at most one per conversation per event-loop pass (the frames one read
/// brought), written after the positions have been handed to the store. Positions and outbox removals
/// are handed to the store only once `onEvent` has returned for the events they cover (on
/// `eventQueue`, then back on the loop): a client killed while a delivery's event waited for it has
/// neither saved nor acknowledged that delivery, so the server sends it again. So across a kill
/// (`kill -9`) deliveries are at least once: one whose `onEvent` had run but whose position was not yet
/// written (one loop hop and a store write later) is passed on again by the next process. An answer the codec reads as
/// ``DeliveryRole/retry(id:after:)`` (a rate limit) pauses the outbox for its delay, after which every
/// unanswered message is sent again, oldest first, one at a time (each after the answer to the one
/// before) until the outbox is empty: a server over its rate then refuses one message per pause, not
/// a whole window. Such a link keeps trying to
/// reconnect by default (``ReconnectPolicy/keepTrying(cap:)``, 60 s cap).
///
/// Threading: methods may be called from any thread. All state lives on one event loop; events reach
/// `onEvent` on `eventQueue` (or on that loop's thread when `eventQueue` is `nil`), in order.
///
/// Reconnecting: after a drop that was not asked for (by the server, the network, a heartbeat timeout
/// or a protocol error) and after a failed first connect, the link retries on the
/// ``Configuration/reconnectSchedule`` (by default 0 s, 2 s, 4 s, each plus a random jitter in
/// [0 s, 1 s)), reporting each attempt and its outcome, and reports ``Event/serverUnavailable`` when the
/// attempts are used up; then it stops, or with ``ReconnectPolicy/keepTrying(cap:)`` goes on retrying
/// with doubling delays (8 s, 16 s, 32 s, then 60 s, each plus jitter) until the app disconnects. The
/// schedule starts over only once a connection has stayed up for ``Configuration/linkHealthyAfter`` (by
/// default one heartbeat interval); a connection that drops sooner continues the schedule, so a server
/// that accepts and at once closes (even after sending a message) cannot drive the link into a tight
/// reconnect loop. A message the codec reads as the server going away (``LinkCodec/isGoingAway(_:)``,
/// sent by ``LongLinkServer/shutDown(timeout:completion:)``) starts the schedule over at once: the
/// reconnect after that close is the schedule's first attempt.
///
/// Several servers (``Configuration/endpoints``, the nodes of one service): ``connect()`` tries the
/// first endpoint; each reconnect attempt, after a failed connect or a drop the link did not ask for,
/// goes to the next endpoint in the list, round robin, on the same schedule (with endpoints A, B, C
/// and the default schedule, a drop from A retries B at once, C after 2 s and A after 4 s more). The
/// schedule's timing and its starting over are the same as with one server: an endpoint that
/// refuses uses up an attempt like any failed connect. ``Event/reconnecting(attempt:delay:endpoint:)``
/// names the endpoint each attempt goes to, ``Event/connected(host:port:)`` the address reached.
/// A host that resolves to several addresses is one endpoint: each attempt to it tries all of them
/// (Happy Eyeballs, `TCPSocket/connect(toHost:onPort:viaInterface:withTimeout:)`).
public final class LongLinkClient<Codec: LinkCodec>: @unchecked Sendable {
    private enum Phase: Equatable {
        case idle
        case connecting
        case connected
        case waitingToReconnect
        case unavailable
    }

    /// The codec given at creation.
    public let codec: Codec
    /// The configuration given at creation.
    public let configuration: Configuration
    private let group: EventLoopGroup
    private let loop: EventLoop
    private let events: EventSink<Event>
    private let socketCallbacks = SocketCallbacks()
    private let greetingStorage = LockedValue<Codec.Message?>(nil)
    /// Reliable delivery's state when the link was made with a ``DeliveryStateStore``; `nil` for a
    /// plain link, which then behaves exactly as before reliable delivery existed.
    let delivery: ReliableDelivery<Codec.Message>?

    // Loop-confined state.
    private var phase = Phase.idle
    private var socket: TCPSocket?
    private var schedule: ReconnectSchedule
    /// The endpoint of the current (or next) connect attempt.
    private var rotation: EndpointRotation
    private var outbox: [Codec.Message] = []
    /// Messages handed to the socket and not yet reported written, oldest first from `inflightStart`.
    private var inflight: [(tag: Int, message: Codec.Message)] = []
    private var inflightStart = 0
    private var nextTag = 0
    private var dropReason: DisconnectReason?
    private var closeWhenDrained = false
    /// Heartbeats sent and acknowledgements received on the current connection.
    private var heartbeatsSent = 0
    private var acksReceived = 0
    /// While closing after sending: the heartbeat count whose acknowledgement ends the drain.
    private var drainTarget: Int?
    private var drainTimer: Scheduled?
    /// The socket's write queue is over its high watermark: new messages wait in the outbox.
    private var sendPaused = false
    private var heartbeatTimer: Scheduled?
    private var ackTimer: Scheduled?
    /// The greeting went out on this connection and nothing has arrived since (loop only).
    private var awaitsGreetingReply = false
    private var reconnectTimer: Scheduled?
    /// Fires when the current connection has been up for ``Configuration/linkHealthyAfter``.
    private var healthyTimer: Scheduled?
    /// Reliable delivery: the server asked for a pause (``DeliveryRole/retry(id:after:)``); the outbox
    /// is resent when it fires, and sends nothing before. With the time it fires (loop clock, ns).
    private var retryTimer: (timer: Scheduled, deadline: UInt64)?
    /// ``Configuration/smartHeartbeat``'s state; `nil` with the fixed heartbeat.
    private let smart: SmartHeartbeatDriver?
    private var watchesNetwork = false

    /// The tag of writes that are not app messages (heartbeats, the greeting).
    private static var controlTag: Int { -1 }

    /// Creates a link; nothing happens until ``connect()``.
    ///
    /// - Parameters:
    ///   - codec: frames the link's messages and tells the heartbeat and its acknowledgement apart (``LinkCodec``).
    ///   - configuration: the server or servers, heartbeat, reconnect and queue settings.
    ///   - group: the loops the link's sockets and timers run on.
    ///   - eventQueue: where `onEvent` runs; `nil` runs it on the link's event-loop thread.
    ///   - onEvent: receives every ``Event`` in order.
    public convenience init(
        codec: Codec,
        configuration: Configuration,
        group: EventLoopGroup = .shared,
        eventQueue: DispatchQueue?,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.init(
            codec: codec, configuration: configuration, delivery: nil, group: group, eventQueue: eventQueue,
            onEvent: onEvent)
    }

    init(
        codec: Codec,
        configuration: Configuration,
        delivery: ReliableDelivery<Codec.Message>?,
        group: EventLoopGroup,
        eventQueue: DispatchQueue?,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.codec = codec
        self.configuration = configuration
        self.delivery = delivery
        self.group = group
        self.loop = group.next()
        self.events = EventSink(queue: eventQueue, handler: onEvent)
        self.schedule = configuration.reconnectSchedule
        self.rotation = EndpointRotation(configuration.endpoints)
        self.smart = configuration.smartHeartbeat.map {
            SmartHeartbeatDriver(policy: $0, logger: Logger(label: "LongLink.LongLinkClient"))
        }
        schedule.policy =
            configuration.reconnectPolicy
            ?? (delivery != nil ? .keepTrying() : configuration.reconnectSchedule.policy)
        wire(socketCallbacks)
    }

    /// A message sent first on every connection, before anything queued (a login, typically).
    public var greeting: Codec.Message? {
        get { greetingStorage.withLock { $0 } }
        set { greetingStorage.withLock { $0 = newValue } }
    }

    // MARK: Public operations

    /// Connects, or starts over after ``Event/serverUnavailable`` or a user disconnect: to the first
    /// of ``Configuration/endpoints``, then to the next ones on the reconnect schedule. Does nothing
    /// while already connecting, connected or waiting to reconnect.
    public func connect() {
        onLoop { [self] in
            guard phase == .idle || phase == .unavailable else { return }
            watchNetwork()
            schedule.reset()
            rotation.restart()
            closeWhenDrained = false
            attempt()
        }
    }

    /// Disconnects now, by the user's choice: no reconnect follows. Reports
    /// ``Event/disconnected(_:)`` with ``DisconnectReason/byUser`` unless already idle. Messages not yet
    /// written stay queued for a later ``connect()``.
    public func disconnect() {
        onLoop { [self] in
            let wasActive = phase != .idle
            stop()
            phase = .idle
            if wasActive { emit(.disconnected(.byUser)) }
        }
    }

    /// Sends everything queued, waits (up to ``Configuration/drainTimeout``) for the server to
    /// acknowledge a final heartbeat, so its replies to what was sent (errors included) arrive first,
    /// and then disconnects by the user's choice. While the link is still connecting or waiting to
    /// reconnect, that happens after the next connect; if the server turns out to be unavailable,
    /// queued messages fail with ``SendFailure/linkClosed``. Messages sent afterwards are not sent.
    ///
    /// With reliable delivery it also waits (within the same ``Configuration/drainTimeout``) until every
    /// numbered message has been stored or refused; numbered messages still unanswered when it closes,
    /// or given to ``send(_:)`` afterwards, stay in the outbox and its store for a later connect (they
    /// never fail with ``SendFailure/linkClosed``). With ``ReconnectPolicy/keepTrying(cap:)``, a link
    /// asked to close after sending stops retrying when it reports ``Event/serverUnavailable``.
    public func disconnectAfterSending() {
        onLoop { [self] in
            closeWhenDrained = true
            switch phase {
            case .connected:
                startDrain()
            case .idle, .unavailable:
                failOutbox()
                let wasActive = phase != .idle
                phase = .idle
                if wasActive { emit(.disconnected(.byUser)) }
            case .connecting, .waitingToReconnect:
                break
            }
        }
    }

    /// Sends `message` now if connected, otherwise queues it (up to
    /// ``Configuration/offlineQueueLimit``) for the next connection. Messages go out in the order given.
    /// Failure is reported as ``Event/sendFailed(_:_:)``.
    ///
    /// With reliable delivery (a link made with a ``DeliveryStateStore``), a message the codec numbers
    /// (``ReliableLinkCodec/id(of:)``) instead gets the next client id, is persisted through the store
    /// and joins the outbox before this returns (it waits for the link's loop: do not call it from
    /// another event loop's thread that this link's loop may be waiting for). It goes out when the
    /// window has room, is resent after every reconnect until the server stores or refuses it
    /// (``Event/stored(id:_:)``, ``Event/refused(id:_:)``), and is never dropped for being offline;
    /// beyond ``Configuration/outboxLimit`` it fails with ``SendFailure/outboxFull``.
    ///
    /// - Returns: the client id given to `message`, or `nil` when it is not numbered (a plain link, a
    ///   message the codec does not number) or was not accepted (the failure is reported as an event).
    @discardableResult
    public func send(_ message: Codec.Message) -> UInt64? {
        if let delivery {
            return loop.runAndWait { [self] in sendReliably(message, delivery) }
        }
        onLoop { [self] in sendPlain(message) }
        return nil
    }

    private func sendPlain(_ message: Codec.Message) {
        if phase == .connected && !closeWhenDrained && !sendPaused {
            write(message)
        } else if outbox.count >= configuration.offlineQueueLimit {
            emit(.sendFailed(message, .queueFull))
        } else {
            outbox.append(message)
        }
    }

    private func sendReliably(_ message: Codec.Message, _ delivery: ReliableDelivery<Codec.Message>) -> UInt64? {
        switch delivery.admit(message) {
        case .unnumbered:
            sendPlain(message)
            return nil
        case .admitted(let id):
            pumpOutbox()
            return id
        case .outboxFull:
            emit(.sendFailed(message, .outboxFull))
        case .encodingFailed(let why):
            emit(.sendFailed(message, .encodingFailed(why)))
        case .storeFailed(let why):
            emit(.sendFailed(message, .storeFailed(why)))
        }
        return nil
    }

    // MARK: Connecting

    private func attempt() {
        guard let endpoint = rotation.current else {
            phase = .unavailable
            emit(.connectFailed(.badConfig("no endpoint to connect to (Configuration.endpoints is empty)")))
            emit(.serverUnavailable)
            if closeWhenDrained { failOutbox() }
            return
        }
        phase = .connecting
        let socket = TCPSocket(delegate: socketCallbacks, delegateQueue: nil, group: group, eventLoop: loop)
        socket.writeHighWatermark = configuration.maxQueuedBytes
        socket.writeLowWatermark = configuration.maxQueuedBytes / 2
        self.socket = socket
        do {
            try socket.connect(toHost: endpoint.host, onPort: endpoint.port, withTimeout: configuration.connectTimeout)
        } catch {
            self.socket = nil
            connectFailed(error)
        }
    }

    private func connectFailed(_ error: SocketError) {
        emit(.connectFailed(error))
        scheduleReconnect()
    }

    /// After a failed connect or an unrequested drop: the next attempt, to the next endpoint, on the
    /// schedule (or the report that the server is unavailable).
    private func scheduleReconnect() {
        rotation.advance()
        let exhausted = schedule.shouldReportUnavailable
        // Keeping on trying stops when the app asked to close after sending: nothing more to wait for.
        let next = exhausted && closeWhenDrained ? nil : schedule.next()
        guard let (attempt, delay) = next else {
            phase = .unavailable
            emit(.serverUnavailable)
            if closeWhenDrained { failOutbox() }
            return
        }
        // Keeping on trying: said once, when the schedule's own attempts have run out.
        if exhausted { emit(.serverUnavailable) }
        phase = .waitingToReconnect
        reconnectTimer = loop.scheduleTask(in: delay) { [self] in
            reconnectTimer = nil
            guard phase == .waitingToReconnect else { return }
            self.attempt()
        }
        emit(.reconnecting(attempt: attempt, delay: delay, endpoint: rotation.announced))
    }

    private func connected(host: String, port: UInt16) {
        phase = .connected
        dropReason = nil
        if let smart {
            smart.probe = nil
            smart.lastTraffic = loop.now()
            if let refreshed = smart.refreshNetwork() { report(refreshed) }
        }
        heartbeatsSent = 0
        acksReceived = 0
        sendPaused = false
        // Everything written and read from here on waits for the handshake (startTLS is a barrier).
        if var tls = configuration.tls {
            // Verified as the endpoint connected to unless the app named the server itself.
            if tls.role == .client && tls.peerName == nil { tls.peerName = rotation.current?.host }
            socket?.startTLS(tls)
        }
        awaitsGreetingReply = false
        if let greeting = delivery?.greeting() ?? greeting {
            writeControl(greeting)
            awaitsGreetingReply = true
        }
        // Reliable delivery: the unacknowledged messages first, in id order, as the window allows.
        pumpOutbox()
        let queued = outbox
        outbox.removeAll()
        for message in queued { write(message) }
        scheduleHeartbeat()
        scheduleHealthyReset()
        if let socket {
            // FramedSocket's shared receive path (as the server's): frames decoded in place; a drop
            // stops the handing on.
            socket.readFrames(
                using: SocketFrameDecoder(codec.makeDecoder()),
                pauseFrames: { [weak self] _ in
                    self?.dropReason != nil
                }
            ) { [weak self] socket, frame in
                guard let self, socket === self.socket else { return }
                received(frame)
            }
        }
        // Reported once the link is fully set up, so an observer that reacts (or a test that advances
        // virtual time) sees the heartbeat timer already running.
        emit(.connected(host: host, port: port))
        if closeWhenDrained && phase == .connected { startDrain() }
    }

    /// Starts the reconnect schedule over once this connection has stayed up for
    /// ``Configuration/linkHealthyAfter``; a drop before then cancels the timer, with the heartbeat's.
    private func scheduleHealthyReset() {
        let healthyAfter = configuration.linkHealthyAfter ?? configuration.heartbeatInterval
        guard healthyAfter > .zero else {
            schedule.reset()
            return
        }
        healthyTimer = loop.scheduleTask(in: healthyAfter) { [self] in
            healthyTimer = nil
            guard phase == .connected else { return }
            schedule.reset()
        }
    }

    // MARK: Closing after sending

    /// Sends what is queued and a final heartbeat; closes when it is acknowledged or the drain times out.
    private func startDrain() {
        guard drainTarget == nil, phase == .connected else { return }
        pumpOutbox()
        let queued = outbox
        outbox.removeAll()
        for message in queued { write(message) }
        sendHeartbeat()
        drainTarget = heartbeatsSent
        drainTimer = loop.scheduleTask(in: configuration.drainTimeout) { [self] in finishDrain() }
    }

    private func finishDrain() {
        drainTimer?.cancel()
        drainTimer = nil
        drainTarget = nil
        guard phase == .connected, let socket else { return }
        flushDelivery()
        dropReason = .byUser
        socket.disconnectAfterWriting()
    }

    /// Closes after sending once the final heartbeat is acknowledged and, with reliable delivery, the
    /// outbox is empty (every message stored or refused).
    private func finishDrainIfDone() {
        guard let drainTarget, acksReceived >= drainTarget, delivery?.outbox.isEmpty ?? true else { return }
        finishDrain()
    }

    /// Cancels timers and drops the socket without reporting anything; keeps unsent messages queued.
    private func stop() {
        flushDelivery()
        delivery?.connectionEnded()
        reconnectTimer?.cancel()
        reconnectTimer = nil
        stopHeartbeat()
        if let socket {
            self.socket = nil
            socket.disconnect()
        }
        requeueInflight()
    }

    // MARK: Writing

    private func write(_ message: Codec.Message) {
        let data: Data
        do {
            data = try codec.encode(message)
        } catch {
            emit(.sendFailed(message, .encodingFailed("\(error)")))
            return
        }
        nextTag += 1
        inflight.append((nextTag, message))
        socket?.write(data, withTimeout: -1, tag: nextTag)
        noteTraffic()
    }

    private func writeControl(_ message: Codec.Message) {
        guard let data = try? codec.encode(message) else { return }
        socket?.write(data, withTimeout: -1, tag: LongLinkClient.controlTag)
        noteTraffic()
    }

    /// With a smart heartbeat: the link is not idle now (a message written or read).
    private func noteTraffic() {
        if let smart { smart.lastTraffic = loop.now() }
    }

    /// Puts messages the dropped connection never finished writing back at the front of the queue.
    private func requeueInflight() {
        guard inflightStart < inflight.count else { return }
        outbox.insert(contentsOf: inflight[inflightStart...].map(\.message), at: 0)
        inflight.removeAll()
        inflightStart = 0
        while outbox.count > configuration.offlineQueueLimit {
            emit(.sendFailed(outbox.removeLast(), .queueFull))
        }
    }

    private func failOutbox() {
        let failed = outbox
        outbox.removeAll()
        for message in failed { emit(.sendFailed(message, .linkClosed)) }
    }

    // MARK: Heartbeat

    private func scheduleHeartbeat() {
        if let smart {
            scheduleSmartHeartbeat(smart)
            return
        }
        heartbeatTimer = loop.scheduleTask(in: configuration.heartbeatInterval) { [self] in
            guard phase == .connected else { return }
            sendHeartbeat()
            armAckTimer()
            scheduleHeartbeat()
        }
    }

    /// The smart heartbeat: once the link has been idle for the current interval, a heartbeat that
    /// probes it (traffic meanwhile puts it off, as Netty's IdleStateHandler does its idle events).
    private func scheduleSmartHeartbeat(_ smart: SmartHeartbeatDriver) {
        let interval = smart.interval.nanosecondsValue
        let idle = loop.now() &- smart.lastTraffic
        heartbeatTimer = loop.scheduleTask(in: .nanoseconds(Int64(clamping: idle >= interval ? 0 : interval - idle))) {
            [self] in
            guard phase == .connected, let smart = self.smart else { return }
            if loop.now() &- smart.lastTraffic >= smart.interval.nanosecondsValue {
                if smart.probe == nil { smart.probe = smart.interval }
                sendHeartbeat()
                armAckTimer()
            }
            scheduleSmartHeartbeat(smart)
        }
    }

    private func armAckTimer() {
        guard ackTimer == nil else { return }
        ackTimer = loop.scheduleTask(in: ackDeadline) { [self] in
            ackTimer = nil
            if let smart, let probe = smart.probe { report(smart.probeFailed(at: probe)) }
            drop(.heartbeatTimeout)
        }
    }

    /// How long the server has to send something after a heartbeat: ``Configuration/heartbeatAckTimeout``
    /// (one interval by default), and at least ``Configuration/connectTimeout`` while the greeting is
    /// unanswered. A login can take the server seconds (a password hash, a queue of logins after a node
    /// died), and it answers the heartbeats behind it only after it: a client beating every 0.5 s
    /// dropped such logins one after another.
    private var ackDeadline: Duration {
        let timeout =
            configuration.heartbeatAckTimeout ?? configuration.smartHeartbeat?.acknowledgementTimeout
            ?? configuration.heartbeatInterval
        guard awaitsGreetingReply else { return timeout }
        return max(timeout, .milliseconds(Int64(configuration.connectTimeout * 1000)))
    }

    private func sendHeartbeat() {
        writeControl(codec.heartbeat)
        heartbeatsSent += 1
    }

    private func stopHeartbeat() {
        retryTimer?.timer.cancel()
        retryTimer = nil
        heartbeatTimer?.cancel()
        heartbeatTimer = nil
        ackTimer?.cancel()
        ackTimer = nil
        healthyTimer?.cancel()
        healthyTimer = nil
        drainTimer?.cancel()
        drainTimer = nil
        drainTarget = nil
    }

    /// Ends the connection on this side for `reason`; the disconnect callback reports it.
    private func drop(_ reason: DisconnectReason) {
        guard phase == .connected, let socket else { return }
        dropReason = reason
        socket.disconnect()
    }

    // MARK: Reading

    /// One whole frame, on the link's loop.
    private func received(_ frame: Codec.Decoder.Frame) {
        let message: Codec.Message
        do {
            message = try codec.message(from: frame)
        } catch {
            drop(.protocolError("\(error)"))
            return
        }
        // The server is going away: the reconnect that follows is the schedule's first attempt.
        if codec.isGoingAway(message) { schedule.reset() }
        // Whatever arrives proves the link alive, as a read does for Netty's IdleStateHandler: a
        // server working through a backlog (a burst resent after a failover) answers a heartbeat only
        // after every message before it, and its replies to those come first.
        ackTimer?.cancel()
        ackTimer = nil
        awaitsGreetingReply = false
        if let smart {
            smart.lastTraffic = loop.now()
            if let answered = smart.probeAnswered() { report(answered, succeeded: true) }
        }
        if codec.isHeartbeatAck(message) {
            acksReceived += 1
            finishDrainIfDone()
        } else if let delivery {
            receivedReliably(message, delivery)
        } else {
            emit(.received(message))
        }
    }

    private func disconnected(_ error: SocketError?) {
        let wasConnected = phase == .connected
        socket = nil
        stopHeartbeat()
        requeueInflight()
        delivery?.connectionEnded()
        guard wasConnected else {
            // A connect attempt failed.
            connectFailed(error ?? .connectTimeout)
            return
        }
        let reason: DisconnectReason
        switch error {
        case nil: reason = dropReason ?? .byUser
        case .closedByPeer?: reason = dropReason ?? .byServer
        case .decodingFailed(let failure)?: reason = dropReason ?? .protocolError("\(failure)")
        case let error?: reason = dropReason ?? .network(error)
        }
        dropReason = nil
        if let smart { connectionLost(reason, smart) }
        emit(.disconnected(reason))
        if reason == .networkChanged {
            reconnectAtOnce()
        } else if reason == .byUser {
            phase = .idle
            if closeWhenDrained { failOutbox() }
        } else {
            scheduleReconnect()
        }
    }

    // MARK: Smart heartbeat and network changes

    /// The interval heartbeats go out at now: the smart heartbeat's current one, or
    /// ``Configuration/heartbeatInterval``. Waits for the link's loop.
    public var currentHeartbeatInterval: Duration {
        loop.runAndWait { [self] in smart?.interval ?? configuration.heartbeatInterval }
    }

    /// The app says the network changed (from its reachability API, as a mobile app does: another
    /// Wi-Fi, Wi-Fi to mobile data). Reports ``Event/networkChanged(from:to:)``; when connected, drops
    /// the connection with ``DisconnectReason/networkChanged`` and reconnects at once (the same
    /// endpoint, the reconnect schedule started over); when connecting or waiting to reconnect, tries
    /// again at once; when idle or unavailable, nothing more. With a ``SmartHeartbeat`` the network
    /// identifier is read again and that network's learned interval used. Any thread.
    public func networkDidChange() {
        onLoop { [self] in networkMayHaveChanged(reportedByApp: true) }
    }

    /// Starts ``SmartHeartbeat/networkChanges`` on the first connect.
    private func watchNetwork() {
        guard !watchesNetwork, let source = smart?.policy.networkChanges else { return }
        watchesNetwork = true
        do {
            try source.start { [weak self] in
                guard let self else { return }
                onLoop { [self] in networkMayHaveChanged(reportedByApp: false) }
            }
        } catch {
            logger.warning("not watching routing changes: \(error)")
        }
    }

    /// A change reported by the app (always acted on) or by the route source (acted on when the
    /// network identifier differs).
    private func networkMayHaveChanged(reportedByApp: Bool) {
        if let smart {
            let refreshed = smart.refreshNetwork()
            guard refreshed != nil || reportedByApp else { return }
            if let refreshed, refreshed.network != nil {
                report(refreshed)
            } else {
                emit(.networkChanged(from: smart.network, to: smart.network))
                if let change = refreshed?.interval { report(change) }
            }
        } else {
            emit(.networkChanged(from: nil, to: nil))
        }
        switch phase {
        case .connected:
            drop(.networkChanged)
        case .connecting:
            stop()
            reconnectAtOnce()
        case .waitingToReconnect:
            reconnectAtOnce()
        case .idle, .unavailable:
            break
        }
    }

    /// After a network change: attempt 1 of a fresh schedule, now, to the same endpoint.
    private func reconnectAtOnce() {
        reconnectTimer?.cancel()
        reconnectTimer = nil
        schedule.reset()
        let number = schedule.next()?.attempt ?? 1
        phase = .waitingToReconnect
        emit(.reconnecting(attempt: number, delay: .zero, endpoint: rotation.announced))
        attempt()
    }

    /// A connection lost with the smart heartbeat on: a failure at the interval being tested when a
    /// heartbeat was unanswered, or when the server or the network ended a connection idle for longer
    /// than the minimum (a NAT or idle timeout that closes rather than black-holes).
    private func connectionLost(_ reason: DisconnectReason, _ smart: SmartHeartbeatDriver) {
        defer { smart.probe = nil }
        switch reason {
        case .byServer, .network:
            let idle = loop.now() &- smart.lastTraffic
            guard smart.probe != nil || idle > smart.policy.minimum.nanosecondsValue else { return }
            report(smart.probeFailed(at: smart.probe ?? smart.interval))
        default:
            return
        }
    }

    private func report(_ refreshed: (network: (from: String?, to: String?)?, interval: SmartHeartbeatDriver.Change?)) {
        if let network = refreshed.network { emit(.networkChanged(from: network.from, to: network.to)) }
        if let change = refreshed.interval { report(change) }
    }

    private func report(_ outcome: (interval: Duration, change: SmartHeartbeatDriver.Change?), succeeded: Bool = false) {
        emit(.heartbeatProbe(interval: outcome.interval, succeeded: succeeded))
        if let change = outcome.change { report(change) }
    }

    private func report(_ change: SmartHeartbeatDriver.Change) {
        emit(.heartbeatIntervalChanged(from: change.from, to: change.to, reason: change.reason))
    }

    // MARK: Reliable delivery

    /// Writes the outbox messages the window lets out (after the greeting, on a connection whose socket
    /// has room).
    private func pumpOutbox() {
        guard let delivery, phase == .connected, !sendPaused, retryTimer == nil, let socket else { return }
        while let frame = delivery.nextFrame() {
            socket.write(frame, withTimeout: -1, tag: LongLinkClient.controlTag)
            noteTraffic()
        }
    }

    /// One message from the server on a reliable link: outbox answers, deliveries (passed on once, in
    /// order), anything else passed on.
    private func receivedReliably(_ message: Codec.Message, _ delivery: ReliableDelivery<Codec.Message>) {
        let incoming = delivery.classify(message)
        // Written once the app has handled this message's event (see scheduleDeliveryFlush).
        scheduleDeliveryFlush()
        switch incoming {
        case .other, .deliver:
            emit(.received(message))
        case .stored(let id, let sent):
            if configuration.reportsStoredAnswers { emit(.received(message)) }
            emit(.stored(id: id, sent))
            pumpOutbox()
            finishDrainIfDone()
        case .refused(let id, let sent):
            emit(.received(message))
            if let sent {
                emit(.refused(id: id, sent))
                pumpOutbox()
                finishDrainIfDone()
            }
        case .retry(let after):
            pauseOutbox(for: after, delivery)  // before the app hears of it: its clock may move at once
            emit(.received(message))
        case .drop:
            break
        case .gap(let conversation, let expected, let received):
            // Not passed on; the next login's positions make the server resend from the gap.
            drop(.deliveryGap(conversation: conversation, expected: expected, received: received))
        }
    }

    /// Sends nothing from the outbox for `delay` (at least; a later deadline asked for meanwhile wins),
    /// then every unanswered message again, from the oldest.
    private func pauseOutbox(for delay: Duration, _ delivery: ReliableDelivery<Codec.Message>) {
        let deadline = loop.now() &+ delay.nanosecondsValue
        if let retryTimer {
            guard deadline > retryTimer.deadline else { return }
            retryTimer.timer.cancel()
        }
        let timer = loop.scheduleTask(in: delay) { [self] in
            retryTimer = nil
            guard phase == .connected else { return }
            delivery.resendUnanswered()
            pumpOutbox()
            finishDrainIfDone()
        }
        retryTimer = (timer, deadline)
    }

    /// Queues one flush for the end of this loop pass (after the frames read in it): one store update
    /// and at most one acknowledgement per conversation, however many deliveries arrived.
    ///
    /// Nothing is persisted or acknowledged before the app has handled it: after the loop's current
    /// task (every frame of one read) what is owed is taken, and it is written on the event queue
    /// right behind the events emitted before (a delivery's `.received` included); its
    /// acknowledgements follow on the loop. A position saved first was the app's loss when it was
    /// killed in between: a message acknowledged, never shown, and not sent again (chat-chaos
    /// recipient-kill, 299/300). Written on the event queue, not back on the loop, the position follows
    /// the app's handler with nothing in between, so a kill in that gap, which shows the message
    /// again after a restart, is as unlikely as it can be.
    private func scheduleDeliveryFlush() {
        guard let delivery, !delivery.flushScheduled, delivery.needsFlush else { return }
        delivery.flushScheduled = true
        loop.execute { [self] in
            let flush = delivery.takeFlush()
            events.perform { [self] in
                let persisted = delivery.persist(through: flush)
                onLoop { [self] in acknowledge(persisted, delivery) }
            }
        }
    }

    /// Counts `persisted`'s store failures and writes its acknowledgements (only on a connection of
    /// this delivery; a later greeting carries the positions anyway).
    private func acknowledge(_ persisted: ReliableDelivery<Codec.Message>.Persisted, _ delivery: ReliableDelivery<Codec.Message>) {
        delivery.noteStoreFailures(persisted.failures)
        guard phase == .connected, dropReason == nil, delivery === self.delivery else { return }
        for acknowledgement in persisted.acknowledgements { writeControl(acknowledgement) }
    }

    /// Everything owed, persisted and acknowledged now (a drain's end, a stop: the app is still there).
    private func flushDelivery() {
        guard let delivery else { return }
        if delivery.needsFlush || delivery.flushScheduled { _ = delivery.takeFlush() }
        acknowledge(delivery.persist(through: delivery.flushesTaken), delivery)
    }

    // MARK: Plumbing

    /// Runs `body` on the link's loop and returns its result (inline when already there).
    func onLoopAndWait<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        loop.runAndWait(body)
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { body() } else { loop.execute(body) }
    }

    /// The library's log of this link (`LoggingSystem`'s handler for `LongLink.LongLinkClient`:
    /// silent unless the app bootstrapped one): connects, drops with their reason, reconnect attempts
    /// and send failures at `debug`, each message received, stored or refused at `trace`.
    public let logger = Logger(label: "LongLink.LongLinkClient")

    private func emit(_ event: Event) {
        switch event {
        case .received, .stored, .refused: logger.trace("\(event)")
        default: logger.debug("\(event)")
        }
        events.emit(event)
    }
}

extension LongLinkClient {
    // Socket callbacks run on the link's loop (delegate queue nil); stale sockets are ignored.

    fileprivate func wire(_ callbacks: SocketCallbacks) {
        callbacks.didConnect = { [weak self] sock, host, port in
            guard let self, sock === socket else { return }
            connected(host: host, port: port)
        }
        callbacks.didWrite = { [weak self] sock, tag in
            guard let self, sock === socket, tag != LongLinkClient.controlTag else { return }
            written(upTo: tag)
        }
        callbacks.didDisconnect = { [weak self] sock, error in
            guard let self, sock === socket else { return }
            disconnected(error)
        }
        callbacks.didSecure = { [weak self] sock in
            guard let self, sock === socket else { return }
            emit(.secured(protocolVersion: sock.tlsProtocolVersion ?? "", isSessionReused: sock.isTLSSessionReused))
        }
        callbacks.didExceedHighWatermark = { [weak self] sock, _ in
            guard let self, sock === socket else { return }
            sendPaused = true
        }
        callbacks.didFallToLowWatermark = { [weak self] sock, _ in
            guard let self, sock === socket else { return }
            resumeSending()
        }
    }

    /// The socket caught up: send what waited in the outbox meanwhile.
    private func resumeSending() {
        sendPaused = false
        pumpOutbox()
        guard phase == .connected, !closeWhenDrained else { return }
        let queued = outbox
        outbox.removeAll()
        for message in queued { write(message) }
    }

    /// Writes complete in order: every message up to `tag` is with the kernel.
    private func written(upTo tag: Int) {
        while inflightStart < inflight.count, inflight[inflightStart].tag <= tag { inflightStart += 1 }
        if inflightStart == inflight.count {
            inflight.removeAll(keepingCapacity: true)
            inflightStart = 0
        }
    }
}
