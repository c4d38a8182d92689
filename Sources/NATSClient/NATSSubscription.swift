import CNATS
import Synchronization

/// Interest in a subject, with a handler libnats calls for each message (libnats'
/// `natsSubscription`). Made by ``NATSConnection/subscribe(_:queueGroup:handler:)`` and
/// ``JetStream/subscribeNew(filter:handler:)``.
///
/// The handler runs on the subscription's own libnats delivery thread, one message at a time, in
/// the order the server sent them.
///
/// Guarantee: once ``unsubscribe()`` has returned, the handler is not running and will not run
/// again. When called from inside the handler itself, ``unsubscribe()`` cannot wait for that
/// handler call; it returns at once and no further call follows it. A handler that blocks on
/// the thread calling ``unsubscribe()`` deadlocks it.
///
/// Sendable: libnats' subscription calls are thread-safe, the pointer is immutable after init,
/// and the rest is in a `Mutex`.
public final class NATSSubscription: @unchecked Sendable {
    /// libnats' subscription, destroyed in deinit.
    private let pointer: OpaquePointer
    private let core: SubscriptionCore
    /// Whether the on-complete callback was registered; without it there is nothing to wait for.
    private let waitsForCompletion: Bool
    private let unsubscribed = Mutex(false)
    /// The connection (or JetStream context) it was made on, kept alive while it exists.
    private let owner: AnyObject & Sendable
    /// The connection whose read loop delivers to it.
    private let connection: NATSConnection

    init(
        pointer: OpaquePointer, core: SubscriptionCore, waitsForCompletion: Bool, owner: AnyObject & Sendable,
        connection: NATSConnection
    ) {
        self.pointer = pointer
        self.core = core
        self.waitsForCompletion = waitsForCompletion
        self.owner = owner
        self.connection = connection
    }

    /// Makes a subscription for `make`'s libnats subscription: `make` gets the callback and closure
    /// to give libnats. Registers the on-complete callback, or unsubscribes and throws when the
    /// subscription was closed before that could happen (the connection closed meanwhile).
    static func make(
        owner: AnyObject & Sendable, connection: NATSConnection, deliver: @escaping @Sendable (OpaquePointer) -> Void,
        _ make: (natsMsgHandler, UnsafeMutableRawPointer) throws(NATSError) -> OpaquePointer
    ) throws(NATSError) -> NATSSubscription {
        let core = SubscriptionCore(deliver: deliver)
        let closure = core.retainedPointer()
        let pointer: OpaquePointer
        do {
            pointer = try make(SubscriptionCore.onMessage, closure)
        } catch {
            // No libnats subscription exists, so nothing will call back.
            Unmanaged<SubscriptionCore>.fromOpaque(closure).release()
            throw error
        }
        let status = natsSubscription_SetOnCompleteCB(pointer, SubscriptionCore.onComplete, closure)
        let subscription = NATSSubscription(
            pointer: pointer, core: core, waitsForCompletion: status == NATS_OK, owner: owner, connection: connection)
        guard status == NATS_OK else {
            // Closed already: libnats' delivery thread may still be in a last handler call with
            // `closure`, so its reference is left to leak rather than freed under it.
            subscription.unsubscribe()
            throw .notConnected
        }
        return subscription
    }

    deinit {
        unsubscribe()
        // libnats 3.4.1's read loop may still be handing it a message it looked up just before the
        // unsubscribe, without a reference: not freed under it (see NATSConnection.close()).
        connection.waitForReadLoop()
        natsSubscription_Destroy(pointer)
    }

    /// Whether the subscription still receives: not unsubscribed and not closed with its connection
    /// (`natsSubscription_IsValid`). Does not block.
    public var isValid: Bool { natsSubscription_IsValid(pointer) }

    /// Ends the subscription (`natsSubscription_Unsubscribe`) and waits until its handler has
    /// returned for the last time (see the type's guarantee). For a JetStream subscription libnats
    /// also deletes its consumer, a request that waits up to the context's timeout.
    /// Idempotent; never throws: a subscription whose connection is closed has already ended.
    public func unsubscribe() {
        let first = unsubscribed.withLock { done in
            defer { done = true }; return !done
        }
        if first { _ = natsSubscription_Unsubscribe(pointer) }
        // Every caller waits, so a second, concurrent call also returns only after the last handler.
        if waitsForCompletion && !core.isDeliveringOnCurrentThread { core.completed.wait() }
    }
}
