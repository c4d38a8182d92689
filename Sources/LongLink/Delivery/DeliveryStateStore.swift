import Foundation

/// Where a reliable client keeps what must survive its own restart: the next message id to assign, the
/// outbox of messages not yet acknowledged as stored, and how far it has received each conversation.
///
/// Threading: the link calls every method on its event loop, one call at a time; implementations must
/// still be `Sendable`, since the link is. Every method throws whatever the implementation's storage
/// throws; the link treats a throw as "not persisted".
public protocol DeliveryStateStore: Sendable {
    /// Everything persisted: the next id to assign, the outbox (oldest first, encoded with the codec's
    /// `encode` → frame bytes), the positions.
    func load() throws -> DeliveryState
    /// Adds the message with client id `id` and encoded frame `frame` to the outbox; also advances the
    /// persisted next id past `id`.
    func enqueue(id: UInt64, frame: Data) throws
    /// Removes the messages with these client ids from the outbox (ids not in it are ignored).
    func remove(ids: [UInt64]) throws
    /// Records the last sequence received of each conversation in `positions` (conversation text form →
    /// sequence); conversations not in `positions` keep what was recorded before.
    func setPositions(_ positions: [String: UInt64]) throws
}

/// Everything a ``DeliveryStateStore`` persists, as ``DeliveryStateStore/load()`` returns it.
public struct DeliveryState: Sendable, Equatable {
    /// One message waiting for the server's acknowledgement.
    public struct OutboxEntry: Sendable, Equatable {
        /// The message's client id (from 1, strictly increasing per client instance).
        public var id: UInt64
        /// The message as the codec encodes it: the bytes of one frame, sent again as they are.
        public var frame: Data

        /// An entry for message `id` encoded as `frame`.
        public init(id: UInt64, frame: Data) {
            self.id = id
            self.frame = frame
        }
    }

    /// The client id the next message gets (ids start at 1).
    public var nextID: UInt64
    /// The messages not yet acknowledged, oldest (lowest id) first.
    public var outbox: [OutboxEntry]
    /// Conversation text form → last sequence received (0 = nothing yet).
    public var positions: [String: UInt64]

    /// A state with these values.
    public init(nextID: UInt64, outbox: [OutboxEntry], positions: [String: UInt64]) {
        self.nextID = nextID
        self.outbox = outbox
        self.positions = positions
    }
}
