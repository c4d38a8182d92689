import Foundation

/// Per conversation (the protocol's text form of its id), the highest sequence number the client has
/// passed to the app; a conversation that is absent is at position 0 (nothing received).
public typealias DeliveryPositions = [String: UInt64]

/// One message waiting in a client's outbox for the server to store it.
public struct OutboxEntry: Sendable, Equatable {
    /// The client id the message carries (from 1, increasing per client).
    public var id: UInt64
    /// The message's wire bytes, frame included, as the codec's ``LinkCodec/encode(_:)`` made them.
    public var frame: Data

    /// An entry for message `id` whose wire bytes are `frame`.
    public init(id: UInt64, frame: Data) {
        self.id = id
        self.frame = frame
    }
}

/// Everything a reliable client keeps between runs.
public struct DeliveryState: Sendable, Equatable {
    /// The client id the next message gets. Default 1; always greater than every id in ``outbox``.
    public var nextID: UInt64
    /// Messages not yet stored by the server, oldest (lowest id) first.
    public var outbox: [OutboxEntry]
    /// The positions to report at the next login.
    public var positions: DeliveryPositions

    /// A state with these values; the defaults describe a client that never sent or received anything.
    public init(nextID: UInt64 = 1, outbox: [OutboxEntry] = [], positions: DeliveryPositions = [:]) {
        self.nextID = nextID
        self.outbox = outbox
        self.positions = positions
    }
}

/// Where a reliable ``LongLinkClient`` persists its outbox and positions, so that a client killed
/// mid-run (`kill -9`) resends what the server had not stored and shows nothing twice after it restarts.
///
/// ``InMemoryDeliveryStateStore`` keeps the state in memory (tests, or an app that needs no
/// persistence); ChatClient's SQLite delivery-state store keeps it in a file.
///
/// Threads: ``load()`` runs in the link's initializer, on the caller's thread. Every other call runs on
/// the link's store queue (a serial queue of its own), never on its event loop: a slow store (a disk,
/// SQLite) does not hold up the link's socket and timers. ``enqueue(id:frame:)`` runs before
/// ``LongLinkClient/send(_:)`` returns (`send` waits for it), so a message the app handed over is
/// persisted when `send` returns; when `send` is called on the link's own loop thread (an `onEvent` with
/// no event queue), that thread waits. Removals and positions are written at most once per loop pass,
/// right after the events they cover have reached the app on the link's event queue (so a delivery's
/// position is saved as soon as the app's handler for it has returned), and at a drain's end and a
/// stop; one such write at a time, in order, and always before the acknowledgements they allow are
/// sent. A store must be safe to call from the store queue's changing threads (both stores here take
/// a lock). A method
/// that throws should leave the state as it was; the link reports a failed enqueue as
/// ``LongLinkClient/SendFailure/storeFailed(_:)`` (the message is not sent) and counts other failures in
/// ``DeliveryStatus/storeFailures``, going on with its state in memory.
public protocol DeliveryStateStore: Sendable {
    /// Everything persisted: the next id to assign, the outbox (oldest first) and the positions.
    /// Called once, when the link is created.
    /// - Throws: any error when the state cannot be read; the link is then not created.
    func load() throws -> DeliveryState
    /// Adds message `id` (wire bytes `frame`) to the end of the outbox and advances the persisted next
    /// id past `id`.
    func enqueue(id: UInt64, frame: Data) throws
    /// Removes the messages with these ids from the outbox (ids not in it are ignored).
    func remove(ids: [UInt64]) throws
    /// Replaces the persisted positions of the conversations in `positions` (others are kept).
    func setPositions(_ positions: DeliveryPositions) throws
}
