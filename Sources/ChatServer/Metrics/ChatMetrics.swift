import ChatProtocol
import Metrics

/// The transports a chat session arrives over: the `transport` label of ``ChatMetrics``' connection
/// metrics (``ChatPeer/transport``).
public enum ChatTransport: String, Sendable, CaseIterable {
    /// LongLink over TCP (or TLS): `im-client` and the other terminal clients.
    case tcp
    /// The chat over WebSocket (the web port's `/chat`).
    case websocket
}

/// The chat server's metrics, for the operator (docs/METRICS.md lists each with its meaning), in one
/// ``MetricsRegistry`` that the web port's `/metrics` renders.
///
/// The counters the routing queue updates per message are taken at creation and kept, so an update is
/// one relaxed atomic add: no lock, no allocation, no lookup by label.
public final class ChatMetrics: Sendable {
    /// Every metric below, rendered by ``render()``.
    public let registry: MetricsRegistry
    /// `chat_connections{transport}`: sessions open now, per transport.
    public let connections: [ChatTransport: Gauge]
    /// `chat_connections_opened_total{transport}`: sessions opened since the start, per transport.
    public let connectionsOpened: [ChatTransport: Counter]
    /// `chat_logins_total{result}`: logins decided, by result (`accepted`, or the refusal's error code).
    public let logins: MetricFamily<Counter>
    /// `chat_logins_total{result="accepted"}`.
    public let loginsAccepted: Counter
    /// `chat_messages_stored_total`: direct messages and broadcasts newly stored (repeats not counted).
    public let messagesStored: Counter
    /// `chat_messages_delivered_total`: messages sent to a reader's session (each reader once per send).
    public let messagesDelivered: Counter
    /// `chat_messages_refused_total{reason}`: messages answered with an error instead of being stored.
    public let messagesRefused: MetricFamily<Counter>
    private let refusedByCode: [ChatErrorCode: Counter]
    /// `chat_store_commit_seconds`: how long each group commit of messages to the store took.
    public let storeCommitSeconds: Histogram
    /// `chat_presence_messages_sent_total`: presence frames sent to sessions by the presence ticks.
    public let presenceMessagesSent: Counter
    /// `chat_sessions_evicted_idle_total`: sessions dropped for their idle timeout (no heartbeat).
    public let sessionsEvictedIdle: Counter

    /// The upper bounds of ``storeCommitSeconds``' buckets, in seconds: 0.5 ms to 10 s.
    public static let commitBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The reasons ``messagesRefused`` counts by, made at creation so that they show at 0.
    static let messageRefusals: [ChatErrorCode] = [
        .badRequest, .messageTooLong, .notLoggedIn, .rateLimited, .storeUnavailable, .unknownRecipient
    ]

    /// The chat's metrics, registered in `registry` (default a new one).
    public init(registry: MetricsRegistry = MetricsRegistry()) {
        self.registry = registry
        let connections = registry.gauge(
            "chat_connections", help: "Chat sessions open now, by transport.", labelNames: ["transport"])
        let opened = registry.counter(
            "chat_connections_opened_total", help: "Chat sessions opened since the server started, by transport.",
            labelNames: ["transport"])
        self.connections = Dictionary(uniqueKeysWithValues: ChatTransport.allCases.map { ($0, connections.labels($0.rawValue)) })
        connectionsOpened = Dictionary(uniqueKeysWithValues: ChatTransport.allCases.map { ($0, opened.labels($0.rawValue)) })
        logins = registry.counter(
            "chat_logins_total",
            help: "Logins decided, by result: accepted, or the error code of the refusal (badPassword, nameTaken, ...).",
            labelNames: ["result"])
        loginsAccepted = logins.labels("accepted")
        messagesStored = registry.counter(
            "chat_messages_stored_total", help: "Direct messages and broadcasts newly stored (repeats of a stored message not counted).")
        messagesDelivered = registry.counter(
            "chat_messages_delivered_total", help: "Messages sent to a reader's session, live or from its delivery window.")
        messagesRefused = registry.counter(
            "chat_messages_refused_total", help: "Messages answered with an error instead of being stored, by the error code.",
            labelNames: ["reason"])
        refusedByCode = Dictionary(
            uniqueKeysWithValues: ChatMetrics.messageRefusals.map { [messagesRefused] in ($0, messagesRefused.labels($0.rawValue)) })
        storeCommitSeconds = registry.histogram(
            "chat_store_commit_seconds", help: "Seconds each group commit of messages to the store took.",
            buckets: ChatMetrics.commitBuckets)
        presenceMessagesSent = registry.counter(
            "chat_presence_messages_sent_total",
            help: "Presence frames sent to sessions by the presence ticks (the fan-out of logins and logouts).")
        sessionsEvictedIdle = registry.counter(
            "chat_sessions_evicted_idle_total",
            help: "Sessions dropped because nothing, not even a heartbeat, arrived within the idle timeout.")
    }

    /// Sessions opened, sessions closed and logins accepted since the start, over every transport
    /// (``connectionsOpened``; closed as opened minus ``connections`` open now; ``loginsAccepted``): how
    /// busy the server has been with what allocates per session, the activity `im-server`'s heap trimmer
    /// is fed (``HeapTrimmer``). The logins count too because a loaded server decides them seconds after
    /// their connections opened, and a login allocates the user's records (and frees what it used on the
    /// way). Any thread; relaxed reads, so a session opening meanwhile may be counted as opened but not
    /// yet open.
    public var sessionEvents: UInt64 {
        var events = loginsAccepted.value
        for transport in ChatTransport.allCases {
            let opened = connectionsOpened[transport]?.value ?? 0
            let open = min(UInt64(clamping: connections[transport]?.value ?? 0), opened)
            events &+= opened &+ (opened - open)
        }
        return events
    }

    /// Counts a message refused with `code` (no lock for the usual codes).
    func refused(_ code: ChatErrorCode) {
        (refusedByCode[code] ?? messagesRefused.labels(code.rawValue)).increment()
    }

    /// Counts a login refused with `code` (a lock: refusals are rare, and each costs a log line anyway).
    func loginRefused(_ code: ChatErrorCode) {
        logins.labels(code.rawValue).increment()
    }

    /// Every metric in the Prometheus text format 0.0.4 (``MetricsRegistry/render()``).
    public func render() -> String { registry.render() }
}
