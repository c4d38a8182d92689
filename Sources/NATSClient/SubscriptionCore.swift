import CNATS
import Glibc
import Synchronization

/// What libnats' delivery thread calls for one subscription: the closure of its message and
/// on-complete callbacks.
///
/// libnats runs one delivery thread per asynchronous subscription; it calls the message callback
/// one message at a time and, once the subscription is closed (unsubscribed, the connection
/// closed) and the last callback has returned, the on-complete callback
/// (`natsSubscription_SetOnCompleteCB`). The core is retained for libnats until that on-complete
/// callback, so the closure pointer stays valid as long as libnats may use it.
final class SubscriptionCore: Sendable {
    /// Turns libnats' message (owned by the caller, who frees it) into a handler call.
    private let deliver: @Sendable (OpaquePointer) -> Void
    /// Opened by the on-complete callback: no handler runs after it.
    let completed = Latch()
    /// The delivery thread while it runs a handler, for ``isDeliveringOnCurrentThread``.
    private let deliveringThread = Mutex<pthread_t?>(nil)

    init(deliver: @escaping @Sendable (OpaquePointer) -> Void) { self.deliver = deliver }

    /// The closure pointer for libnats: a +1 reference, given back by ``onComplete``.
    func retainedPointer() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    /// Whether the calling thread is this subscription's delivery thread inside a handler (then
    /// waiting for the handler to return would wait forever).
    var isDeliveringOnCurrentThread: Bool {
        deliveringThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// libnats' message callback (`natsMsgHandler`): hands the message on and frees it.
    static let onMessage: natsMsgHandler = { _, _, message, closure in
        guard let message else { return }
        defer { natsMsg_Destroy(message) }
        guard let closure else { return }
        let core = Unmanaged<SubscriptionCore>.fromOpaque(closure).takeUnretainedValue()
        core.deliveringThread.withLock { $0 = pthread_self() }
        core.deliver(message)
        core.deliveringThread.withLock { $0 = nil }
    }

    /// libnats' on-complete callback (`natsOnCompleteCB`): opens ``completed`` and gives back
    /// libnats' reference.
    static let onComplete: natsOnCompleteCB = { closure in
        guard let closure else { return }
        let core = Unmanaged<SubscriptionCore>.fromOpaque(closure).takeRetainedValue()
        core.completed.open()
    }
}
