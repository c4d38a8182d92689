import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import Metrics
import SocketLog
import Synchronization

/// The instant-messaging server (MISSION M6): users log in by name, send to one user or to everyone,
/// and receive what others send them, over long connections kept alive by heartbeats.
///
/// Routing state (who is logged in as what) lives on one serial queue, the queue the underlying
/// ``LongLinkServer`` delivers its events on, so it needs no locks.
///
/// The operator's log goes to the `logger` given at creation, from that queue (silent unless the app
/// bootstrapped ``LoggingSystem`` or passed a logger with a handler): at `info`, `login NAME from
/// ADDRESS` (with `(replaced its session from ADDRESS)` when the user logged in again over a new
/// connection), `claim NAME from HOST`, `logout NAME (closed by client)` and `drop NAME (CAUSE)` (or
/// `drop ADDRESS (CAUSE)` before a login); at `notice`, `refused login NAME from ADDRESS (REASON)`; at
/// `warning`, clients' protocol errors; at `error`, store failures. Refusals of connections and messages
/// are logged once per offender, repeats summed up a minute later: `refused connection from ADDRESS
/// (server full (N connections))`, `rate limit: NAME sends more than R messages/s (burst B); messages
/// refused`, `drop ADDRESS (CAUSE)` before a login; `not sent to NAMES: MESSAGE (cannot encode: …)` at
/// `warning`; `shutting down: …` at `notice`. At `debug`, in a cluster, what the presence bucket says
/// of each user and which nodes each refresh finds live. At `trace`, the path of every stored message
/// (`--log-level trace`, for finding where one went): `path: CONV#SEQ from NAME stored here` (`found stored already` for a repeat)
/// or `… stored by NODE, from the stream`, then per reader `… in NAME's window` or `… live to NAME`,
/// and `… sent to NAME` when a window sends it; at a login, `path: NAME's login window: [CONV
/// START..HEAD, …]`.
///
/// Limits (``Limits``, docs/PROTOCOL.md "Limits and refusals"): connections, a message rate per
/// connection, login and frame deadlines, the text limit; each refusal is an error frame for the
/// client. ``shutDown(timeout:completion:)`` shuts down gracefully.
///
/// Given a discovery configuration, it also answers LAN discovery (``DiscoveryResponder``,
/// docs/PROTOCOL.md "Finding the server") with its address, port, name and number of users online.
public final class ChatServer: Sendable {
    /// Longest user name accepted, in characters: ``UserName/maxCharacters`` (32; names are limited in
    /// bytes too, ``UserName/maxBytes``).
    public static let maxNameLength = UserName.maxCharacters
    /// Most names listed in a ``ChatMessage/loginAccepted(name:online:onlineCount:resumeToken:)``, so
    /// the reply stays small however many users are online.
    public static let maxOnlineListed = 100
    /// How long logins and logouts are gathered before they are announced, by default: 200 ms
    /// (docs/PROTOCOL.md "Presence").
    public static let defaultPresenceInterval: Duration = .milliseconds(200)

    let queue = DispatchQueue(label: "IMChat.ChatServer")
    let link: LongLinkServer<ChatCodec>
    let router: Router
    let logger: Logger
    private let responder: DiscoveryResponder?
    private let retention: RetentionPolicy
    private let retentionTimer = LockedValue<DispatchSourceTimer?>(nil)
    /// True from a successful ``start()`` until ``stop()`` or ``shutDown(timeout:completion:)``.
    let accepting = Atomic(false)
    /// The operator's metrics (docs/METRICS.md): what the web port's `/metrics` renders.
    public let metrics: ChatMetrics

    /// How often the retention policy is applied while the server runs: every 10 minutes.
    public static let retentionInterval: DispatchTimeInterval = .seconds(600)

    /// A server that will listen on `host` (nil = every interface) and `port` (0 = a free port) and
    /// drop clients silent for `idleTimeout`; with a `discovery` configuration (default `nil`: none) it
    /// answers discovery queries too, from the time it starts.
    ///
    /// - Parameters:
    ///   - store: where every direct message and broadcast is kept before it is delivered or
    ///     acknowledged, with users, password hashes and read positions. Default: in memory (lost when
    ///     the process ends); `im-server` uses a ``SQLiteMessageStore`` file. Used on the server's queue.
    ///   - passwordHasher: the Argon2id cost of new password hashes (default libsodium's interactive
    ///     limits, 64 MiB and about 90 ms each); checks run off the server's queue, two at a time.
    ///   - loginThrottle: how many wrong passwords lock a name or an address, and for how long
    ///     (``LoginThrottle/Configuration``: by default 5 in 15 min lock for 30 s, doubling to 15 min).
    ///   - retention: which messages the store keeps; applied at ``start()`` and every
    ///     ``retentionInterval``. Default: every message.
    ///   - presenceInterval: the presence tick: logins and logouts are gathered this long, from the
    ///     first one, and then announced together (docs/PROTOCOL.md "Presence"). Default
    ///     ``defaultPresenceInterval`` (200 ms); `nil`: only when ``flushPresence()`` is called (tests
    ///     use it to drive the ticks themselves).
    ///   - limits: the limits on connections and what they send (``Limits``: connections, message rate
    ///     and burst, login and frame deadlines). Default ``Limits/init()``.
    ///   - logger: the operator's log (see above). Default: a logger labelled `IMChat.ChatServer` from
    ///     ``LoggingSystem`` (silent until the app bootstraps it).
    ///   - tls: TLS server settings for every connection (docs/PROTOCOL.md "The chat over TLS"); `nil`
    ///     (the default): plaintext.
    ///   - cluster: this node's cluster (``ChatCluster``), so several servers behave as one chat; pass
    ///     its ``ChatCluster/store`` as `store`. `nil` (the default): a server of its own.
    ///   - metrics: where the server counts what it does (``ChatMetrics``); it also registers there the
    ///     metrics it samples at a scrape (`chat_routing_queue_depth`, `chat_heartbeats_answered_total`),
    ///     so give each server its own. Default: a new one.
    public init(
        host: String?,
        port: UInt16,
        idleTimeout: Duration = .seconds(360),
        discovery: DiscoveryResponder.Configuration? = nil,
        store: any MessageStore = InMemoryMessageStore(),
        passwordHasher: PasswordHasher = PasswordHasher(),
        loginThrottle: LoginThrottle.Configuration = LoginThrottle.Configuration(),
        retention: RetentionPolicy = .keepEverything,
        presenceInterval: Duration? = ChatServer.defaultPresenceInterval,
        limits: Limits = Limits(),
        group: EventLoopGroup = .shared,
        logger: Logger = Logger(label: "IMChat.ChatServer"),
        tls: TLSConfiguration? = nil,
        cluster: ChatCluster? = nil,
        metrics: ChatMetrics = ChatMetrics()
    ) {
        var configuration = LongLinkServer<ChatCodec>.Configuration(host: host, port: port)
        configuration.tls = tls
        configuration.idleTimeout = idleTimeout
        configuration.maxConnections = limits.maxConnections
        configuration.admissionTimeout = limits.loginTimeout
        configuration.frameTimeout = limits.frameTimeout
        let clock = group.next()
        let router = Router(
            store: store, hasher: passwordHasher, throttle: LoginThrottle(configuration: loginThrottle),
            queue: queue, limits: limits, clock: { clock.now() }, logger: logger, metrics: metrics)
        self.metrics = metrics
        self.logger = logger
        router.presence.interval = presenceInterval
        self.router = router
        self.retention = retention
        let link = LongLinkServer(codec: ChatCodec(), configuration: configuration, group: group, eventQueue: queue) { event in
            router.handle(event)
        }
        self.link = link
        metrics.registry.gauge(
            "chat_routing_queue_depth",
            help: "Connection events (opens, messages, closes) queued for the routing queue and not yet handled, at the scrape."
        ) { [weak link] in Double(link?.pendingEvents ?? 0) }
        metrics.registry.counter(
            "chat_heartbeats_answered_total",
            help: "Heartbeats answered (the server cannot see a heartbeat a client missed: it drops a silent client at its idle timeout)."
        ) { [weak link] in UInt64(link?.heartbeatsAnswered ?? 0) }
        router.sendToMany = { [weak link] message, peers in
            // Encoded once for LongLink's sessions; any other transport's one by one.
            let sessions = peers.compactMap { $0 as? LongLinkServer<ChatCodec>.Session }
            link?.send(message, to: sessions)
            if sessions.count < peers.count {
                for peer in peers where !(peer is LongLinkServer<ChatCodec>.Session) { peer.send(message) }
            }
        }
        if let cluster {
            let clusterLink = ClusterLink(cluster: cluster, router: router)
            router.cluster = clusterLink
            cluster.events.withLock { events in
                events = { [weak clusterLink] event in
                    switch event {
                    case .disconnected: logger.error("cluster: lost NATS; messages are refused until it is back")
                    case .reconnected:
                        logger.notice("cluster: NATS is back")
                        clusterLink?.resync()
                    case .closed: logger.notice("cluster: NATS connection closed")
                    case .connected: logger.notice("cluster: connected to NATS")
                    }
                }
            }
        }
        // Answers are made on the routing queue, where the count of users may be read.
        let queue = self.queue
        responder = discovery.map { configuration in
            DiscoveryResponder(configuration: configuration, queue: queue, group: group) { router.users.count }
        }
    }

    /// Starts listening, then answering discovery (when configured), advertising the address listened on
    /// as ``DiscoveryResponder/interfaces(forListeningOn:)`` says.
    /// In cluster mode it first subscribes to the other nodes (``ChatCluster``).
    /// - Throws: ``SocketError`` (`EADDRINUSE`, for example); when discovery cannot start, the listener
    ///   is stopped again. In cluster mode also ``SocketError/badConfig(_:)`` when the cluster's
    ///   subscriptions cannot be made (NATS's words in it).
    public func start() throws(SocketError) {
        do {
            try router.cluster?.start()
        } catch {
            throw SocketError.badConfig("cannot join the cluster: \(error)")
        }
        try link.start()
        accepting.store(true, ordering: .relaxed)
        if retention != .keepEverything {
            // Once before the first login can arrive, then on the interval.
            queue.sync { router.applyRetention(retention) }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + ChatServer.retentionInterval, repeating: ChatServer.retentionInterval)
            timer.setEventHandler { [router, retention] in router.applyRetention(retention) }
            timer.resume()
            retentionTimer.withLock { $0 = timer }
        }
        guard let responder else { return }
        let (interfaces, advertisedHost) =
            link.localAddress.map(DiscoveryResponder.interfaces(forListeningOn:))
            ?? ([nil, "127.0.0.1"], "")
        do {
            try responder.start(advertisedHost: advertisedHost, tcpPort: link.port, interfaces: interfaces)
        } catch {
            accepting.store(false, ordering: .relaxed)
            link.stop()
            throw error
        }
    }

    /// Whether a load balancer should send clients here (the web port's `/healthz`): the server was
    /// started and accepts connections (not stopped nor shutting down) and, in a cluster, is connected to
    /// NATS now. Any thread.
    public var isHealthy: Bool {
        isAccepting && (router.cluster?.cluster.isConnected ?? true)
    }

    /// Whether the server accepts connections now: from a successful ``start()`` until ``stop()`` or
    /// ``shutDown(timeout:completion:)``. Any thread.
    public var isAccepting: Bool { accepting.load(ordering: .relaxed) }

    /// The UDP port discovery is answered on, once started; `nil` without discovery.
    public var discoveryPort: UInt16? { responder?.port }

    /// What discovery has answered and ignored so far; `nil` without discovery.
    public var discoveryStatistics: DiscoveryResponder.Statistics? { responder?.statistics }

    /// The port listened on, once started.
    public var port: UInt16 { link.port }

    /// The address listened on, once started (`127.0.0.1:7777`, `[::1]:7777`).
    public var localAddress: SocketAddress? { link.localAddress }

    /// Stops listening and answering discovery, and closes every connection at once (without telling
    /// the clients why: ``shutDown(timeout:completion:)`` does).
    public func stop() {
        accepting.store(false, ordering: .relaxed)
        stopTimers()
        router.cluster?.stop(removingPresence: false, users: [])
        link.stop()
    }

    /// Stops the retention timer and discovery.
    func stopTimers() {
        retentionTimer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        responder?.stop()
    }

    /// Names of the users logged in now, sorted. Waits for the routing queue.
    public var onlineUsers: [String] { queue.sync { router.presence.board.roster } }

    /// Announces the logins and logouts gathered since the last presence tick now, as the tick does by
    /// itself every `presenceInterval` (see ``init(host:port:idleTimeout:discovery:store:passwordHasher:loginThrottle:retention:presenceInterval:limits:group:logger:)``).
    /// Returns once they are handed to the connections. Waits for the routing queue: do not call it from
    /// the `log` closure.
    public func flushPresence() { queue.sync { router.presenceTick() } }
}
