import AsyncSocket
import Foundation

/// Where a ``LinkMachine`` is, with the data that only exists there: an attempt has an endpoint, a
/// connection has its heartbeat counters, drain, writes in flight and pause, a wait has its delay.
/// Nothing here touches a socket or a timer: the driver holds those, keyed by ``LinkTimer``.
enum LinkState<Codec: LinkCodec>: Sendable {
    /// Never connected, or disconnected by the app.
    case idle
    /// A connect attempt to `endpoint` is under way.
    case connecting(endpoint: Endpoint)
    /// Connected; the connection's data.
    case connected(LinkConnection<Codec>)
    /// Attempt `attempt` of the reconnect schedule starts when ``LinkTimer/reconnect`` fires, `delay`
    /// after it was scheduled.
    case waitingToReconnect(attempt: Int, delay: Duration)
    /// The reconnect schedule ran out (``ReconnectPolicy/giveUp``), or there is no endpoint.
    case unavailable

    /// True in ``idle``.
    var isIdle: Bool { if case .idle = self { true } else { false } }
    /// True in ``connected(_:)``.
    var isConnected: Bool { if case .connected = self { true } else { false } }
}

/// One established connection's state, from the connect to the disconnect.
struct LinkConnection<Codec: LinkCodec>: Sendable {
    /// Heartbeats written on this connection, and acknowledgements received.
    var heartbeatsSent = 0
    var acksReceived = 0
    /// ``LinkTimer/acknowledgement`` is running: a heartbeat waits for anything from the server.
    var awaitsAck = false
    /// The greeting went out and nothing has arrived since.
    var awaitsGreetingReply = false
    /// Closing after sending (``LongLinkClient/disconnectAfterSending()``).
    var drain = Drain.none
    /// App messages handed to the socket and not yet reported written.
    var inflight = InflightWrites<Codec.Message>()
    /// The socket's write queue is over its high watermark: new messages wait in the offline queue.
    var sendPaused = false
    /// Set when this side ends the connection: the reason the disconnect is reported with.
    var dropReason: LongLinkClient<Codec>.DisconnectReason?
    /// Reliable delivery: the outbox is paused until ``LinkTimer/retry`` fires at this loop time (ns).
    var retryDeadline: UInt64?

    /// The stages of closing after sending.
    enum Drain: Equatable, Sendable {
        /// Not closing.
        case none
        /// The final heartbeat went out; closing when acknowledgement number `target` arrives (and the
        /// outbox is empty) or ``LinkTimer/drain`` fires.
        case awaiting(target: Int)
        /// Done: the store is being brought up to date; the close follows its answer.
        case closing
    }
}

/// Messages handed to the socket, oldest first, until their writes complete. Writes complete in order.
struct InflightWrites<Message: Sendable>: Sendable {
    private var items: [(tag: Int, message: Message)] = []
    private var start = 0

    /// Remembers `message`, written with `tag`.
    mutating func append(_ message: Message, tag: Int) { items.append((tag, message)) }

    /// Every message up to `tag` is with the kernel.
    mutating func written(upTo tag: Int) {
        while start < items.count, items[start].tag <= tag { start += 1 }
        if start == items.count {
            items.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    /// The messages not yet written, oldest first; forgets them all.
    mutating func takeUnwritten() -> [Message] {
        defer {
            items.removeAll()
            start = 0
        }
        return items[start...].map(\.message)
    }
}
