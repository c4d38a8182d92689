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
/// are handed to the store only once `onEvent` has returned for the events they cover (on the link's
/// store queue, right behind `eventQueue`; then back on the loop): a client killed while a delivery's event waited for it has
/// neither saved nor acknowledged that delivery, so the server sends it again. So across a kill
/// (`kill -9`) deliveries are at least once: one whose `onEvent` had run but whose position was not yet
/// written (one loop hop and a store write later) is passed on again by the next process. An answer the codec reads as
/// ``DeliveryRole/retry(id:after:)`` (a rate limit) pauses the outbox for its delay, after which every
/// unanswered message is sent again, oldest first, one at a time (each after the answer to the one
/// before) until the outbox is empty: a server over its rate then refuses one message per pause, not
/// a whole window. Such a link keeps trying to
/// reconnect by default (``ReconnectPolicy/keepTrying(cap:)``, 60 s cap).
///
/// Threading: methods may be called from any thread. All state lives on one event loop, in a pure
/// state machine (`LinkMachine`) that this class drives: it feeds the machine what happens and performs
/// what the machine asks for (see <doc:LinkStateMachine>). Events reach `onEvent` on `eventQueue` (or
/// on that loop's thread when `eventQueue` is `nil`), in order. Calls into the ``DeliveryStateStore``
/// run on the link's own serial store queue, never on the loop.
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
    /// The codec given at creation.
    public let codec: Codec
    /// The configuration given at creation.
    public let configuration: Configuration
    let group: EventLoopGroup
    /// The loop the link's socket, timers and state machine run on.
    let loop: EventLoop
    let events: EventSink<Event>
    let socketCallbacks = SocketCallbacks()
    private let greetingStorage = LockedValue<Codec.Message?>(nil)
    /// Reliable delivery's state when the link was made with a ``DeliveryStateStore``; `nil` for a
    /// plain link, which then behaves exactly as before reliable delivery existed.
    let delivery: ReliableDelivery<Codec.Message>?
    /// Where every call into the delivery store runs (serial; never the loop).
    let storeQueue = DispatchQueue(label: "LongLink.LongLinkClient.store")
    /// The link's behaviour (loop only).
    var machine: LinkMachine<Codec>
    /// The socket, the timers and the inputs waiting to be handled (loop only).
    var resources = LinkResources<Codec>()

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
        let smart = configuration.smartHeartbeat.map {
            SmartHeartbeatDriver(policy: $0, logger: Logger(label: "LongLink.LongLinkClient"))
        }
        machine = LinkMachine(codec: codec, configuration: configuration, smart: smart, delivery: delivery)
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
    /// while already connecting, connected or waiting to reconnect. Any thread; returns at once.
    public func connect() {
        onLoop { [self] in feed(.connect) }
    }

    /// Disconnects now, by the user's choice: no reconnect follows. Reports
    /// ``Event/disconnected(_:)`` with ``DisconnectReason/byUser`` unless already idle. Messages not yet
    /// written stay queued for a later ``connect()``. Any thread; returns at once.
    public func disconnect() {
        onLoop { [self] in feed(.disconnect) }
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
        onLoop { [self] in feed(.disconnectAfterSending) }
    }

    /// Sends `message` now if connected, otherwise queues it (up to
    /// ``Configuration/offlineQueueLimit``) for the next connection. Messages go out in the order given.
    /// Failure is reported as ``Event/sendFailed(_:_:)``.
    ///
    /// With reliable delivery (a link made with a ``DeliveryStateStore``), a message the codec numbers
    /// (``ReliableLinkCodec/id(of:)``) instead gets the next client id, is persisted through the store
    /// (on the link's store queue) and joins the outbox before this returns (it waits for the store
    /// queue and the link's loop: do not call it from another event loop's thread that this link's loop
    /// may be waiting for). It goes out when the window has room, is resent after every reconnect until
    /// the server stores or refuses it (``Event/stored(id:_:)``, ``Event/refused(id:_:)``), and is never
    /// dropped for being offline; beyond ``Configuration/outboxLimit`` it fails with
    /// ``SendFailure/outboxFull``.
    ///
    /// - Returns: the client id given to `message`, or `nil` when it is not numbered (a plain link, a
    ///   message the codec does not number) or was not accepted (the failure is reported as an event).
    @discardableResult
    public func send(_ message: Codec.Message) -> UInt64? {
        if let delivery { return sendReliably(message, delivery) }
        onLoop { [self] in feed(.send(message)) }
        return nil
    }

    /// The interval heartbeats go out at now: the smart heartbeat's current one, or
    /// ``Configuration/heartbeatInterval``. Waits for the link's loop.
    public var currentHeartbeatInterval: Duration {
        loop.runAndWait { [self] in machine.heartbeatInterval }
    }

    /// The app says the network changed (from its reachability API, as a mobile app does: another
    /// Wi-Fi, Wi-Fi to mobile data). Reports ``Event/networkChanged(from:to:)``; when connected, drops
    /// the connection with ``DisconnectReason/networkChanged`` and reconnects at once (the same
    /// endpoint, the reconnect schedule started over); when connecting or waiting to reconnect, tries
    /// again at once; when idle or unavailable, nothing more. With a ``SmartHeartbeat`` the network
    /// identifier is read again and that network's learned interval used. Any thread.
    public func networkDidChange() {
        onLoop { [self] in feed(.networkChanged(reportedByApp: true)) }
    }

    /// The library's log of this link (`LoggingSystem`'s handler for `LongLink.LongLinkClient`:
    /// silent unless the app bootstrapped one): connects, drops with their reason, reconnect attempts
    /// and send failures at `debug`, each message received, stored or refused at `trace`.
    public let logger = Logger(label: "LongLink.LongLinkClient")

    /// Runs `body` on the link's loop and returns its result (inline when already there).
    func onLoopAndWait<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        loop.runAndWait(body)
    }

    /// Runs `body` on the link's loop: inline when already there, else as a task.
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { body() } else { loop.execute(body) }
    }
}
