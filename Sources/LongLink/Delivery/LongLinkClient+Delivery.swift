import AsyncSocket
import Dispatch
import Foundation

extension LongLinkClient where Codec: ReliableLinkCodec {
    /// Creates a link with reliable delivery (issue 11): every message the codec numbers gets a client id,
    /// is persisted in `store` and stays in the outbox until the server stores or refuses it; deliveries
    /// are passed on once, in order, and acknowledged; the greeting reports the positions. Nothing
    /// happens until ``connect()``.
    ///
    /// The link continues from what `store` holds: its next id, the messages a previous link (or
    /// process) left unacknowledged (resent, oldest first, after the first greeting), and its positions.
    /// Unless ``Configuration/reconnectPolicy`` says otherwise, it keeps trying to reconnect
    /// (``ReconnectPolicy/keepTrying(cap:)``, cap 60 s).
    ///
    /// - Parameters:
    ///   - codec: frames the link's messages and tells the heartbeat, the greeting and the delivery
    ///     messages apart (``ReliableLinkCodec``).
    ///   - configuration: the server, heartbeat, reconnect and queue settings.
    ///   - store: where the outbox and positions are kept; ``DeliveryStateStore/load()`` is called here,
    ///     on the caller's thread, everything else on the link's store queue (never its event loop).
    ///   - group: the loops the link's sockets and timers run on.
    ///   - eventQueue: where `onEvent` runs; `nil` runs it on the link's event-loop thread.
    ///   - onEvent: receives every ``Event`` in order.
    /// - Throws: what `store.load()` throws, or ``DeliveryStoreError/undecodableEntry(id:reason:)`` when a
    ///   stored outbox entry does not decode with `codec` to a message carrying its id.
    public convenience init(
        codec: Codec,
        configuration: Configuration,
        store: any DeliveryStateStore,
        group: EventLoopGroup = .shared,
        eventQueue: DispatchQueue?,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws {
        let delivery = try ReliableDelivery(
            codec: codec, store: store, state: try store.load(),
            limit: configuration.outboxLimit, window: configuration.unacknowledgedWindow)
        self.init(
            codec: codec, configuration: configuration, delivery: delivery, group: group, eventQueue: eventQueue,
            onEvent: onEvent)
    }

    /// Reliable delivery: builds the message sent first on every connection from the positions (per
    /// conversation, the highest sequence passed to the app), so the server resends what the client
    /// missed. Called on the link's event loop at each connect. When `nil` (the default) ``greeting``
    /// is sent instead, and the server learns no positions. Ignored on a plain link.
    public var greetingBuilder: (@Sendable (DeliveryPositions) -> Codec.Message)? {
        get { delivery?.greetingBuilder.withLock { $0 } }
        set { delivery?.greetingBuilder.withLock { $0 = newValue } }
    }

    /// Reliable delivery's state now (waits for the link's loop; inline on it). `nil` on a plain link.
    public var deliveryStatus: DeliveryStatus? {
        guard let delivery else { return nil }
        return onLoopAndWait {
            DeliveryStatus(
                outboxCount: delivery.outbox.count, inFlight: delivery.outbox.inFlight, nextID: delivery.outbox.nextID,
                positions: delivery.tracker.positions, resends: delivery.outbox.resends,
                duplicatesDropped: delivery.tracker.duplicates, gapsDropped: delivery.tracker.gaps,
                storeFailures: delivery.storeFailures, lastStoreError: delivery.lastStoreError, pauses: delivery.pauses)
        }
    }
}

/// A snapshot of a reliable ``LongLinkClient``'s delivery state and counters (all since the link was
/// created, except what the store restored).
public struct DeliveryStatus: Sendable, Equatable {
    /// Messages the server has not yet stored or refused (sent or waiting); kept in the store.
    public var outboxCount: Int
    /// Of those, written on the current connection and not yet answered (at most the window).
    public var inFlight: Int
    /// The client id the next numbered message gets.
    public var nextID: UInt64
    /// Per conversation, the highest sequence passed to the app.
    public var positions: DeliveryPositions
    /// Outbox messages written again after a reconnect.
    public var resends: Int
    /// Deliveries not passed on because they had been already (acknowledged again).
    public var duplicatesDropped: Int
    /// Deliveries not passed on because an earlier one was missing (each makes the link reconnect).
    public var gapsDropped: Int
    /// Store calls that threw (the link went on with its state in memory).
    public var storeFailures: Int
    /// The last store error's text, if any.
    public var lastStoreError: String?
    /// Answers that paused the outbox (``DeliveryRole/retry(id:after:)``: the server's rate limit).
    public var pauses: Int

    /// A status with these values (for comparing, or for a stand-in link in an app's tests).
    public init(
        outboxCount: Int, inFlight: Int, nextID: UInt64, positions: DeliveryPositions, resends: Int,
        duplicatesDropped: Int, gapsDropped: Int, storeFailures: Int, lastStoreError: String?, pauses: Int = 0
    ) {
        self.outboxCount = outboxCount
        self.inFlight = inFlight
        self.nextID = nextID
        self.positions = positions
        self.resends = resends
        self.duplicatesDropped = duplicatesDropped
        self.gapsDropped = gapsDropped
        self.storeFailures = storeFailures
        self.lastStoreError = lastStoreError
        self.pauses = pauses
    }
}
