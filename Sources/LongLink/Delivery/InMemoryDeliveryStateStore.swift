import AsyncSocket
import Foundation

/// A ``DeliveryStateStore`` that keeps the state in memory: nothing survives the process, but a new
/// ``LongLinkClient`` made from the same store object continues where the old one stopped. For tests
/// and for apps that need reliable delivery only while they run. Thread-safe (one lock).
public final class InMemoryDeliveryStateStore: DeliveryStateStore {
    private let state: LockedValue<DeliveryState>

    /// A store holding `state` (default: empty, next id 1).
    public init(_ state: DeliveryState = DeliveryState()) {
        self.state = LockedValue(state)
    }

    /// A copy of what the store holds now.
    public var snapshot: DeliveryState { state.withLock { $0 } }

    /// The stored state. Never throws.
    public func load() throws -> DeliveryState { snapshot }

    /// Appends the entry and moves the next id past `id`. Never throws.
    public func enqueue(id: UInt64, frame: Data) throws {
        state.withLock { state in
            state.outbox.append(OutboxEntry(id: id, frame: frame))
            if id >= state.nextID { state.nextID = id &+ 1 }
        }
    }

    /// Removes the entries with these ids. Never throws.
    public func remove(ids: [UInt64]) throws {
        let removed = Set(ids)
        state.withLock { $0.outbox.removeAll { removed.contains($0.id) } }
    }

    /// Merges `positions` into the stored ones. Never throws.
    public func setPositions(_ positions: DeliveryPositions) throws {
        state.withLock { $0.positions.merge(positions) { _, new in new } }
    }
}
