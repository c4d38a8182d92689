import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPSocket {
    /// The delegate, held weakly. Safe to set from any thread; once it changes, no callback that has not
    /// started yet reaches the old delegate.
    public var delegate: (any TCPSocketDelegate)? {
        get { shared.withLock { $0.delegate } }
        set { shared.withLock { $0.delegate = newValue } }
    }

    /// The queue delegate methods run on; `nil` means the event-loop thread.
    public var delegateQueue: DispatchQueue? {
        get { shared.withLock { $0.delegateQueue } }
        set { shared.withLock { $0.delegateQueue = newValue } }
    }

    /// Any value the app wants to keep with this socket (GCDAsyncSocket's `userData`).
    public var userData: (any Sendable)? {
        get { shared.withLock { $0.userData } }
        set { shared.withLock { $0.userData = newValue } }
    }

    /// Sets the delegate and its queue together, atomically (GCDAsyncSocket's `setDelegate:delegateQueue:`).
    public func setDelegate(_ delegate: (any TCPSocketDelegate)?, delegateQueue: DispatchQueue?) {
        shared.withLock {
            $0.delegate = delegate
            $0.delegateQueue = delegateQueue
        }
    }

    /// Sets the delegate and returns once no callback can be running on the old delegate queue, for
    /// teardown: after `synchronouslySetDelegate(nil)` returns, the old delegate is never called again
    /// (GCDAsyncSocket's `synchronouslySetDelegate:`). Call it from a delegate callback or from a thread
    /// other than the delegate queue; from a plain block on the delegate queue it would wait forever.
    public func synchronouslySetDelegate(_ delegate: (any TCPSocketDelegate)?) {
        synchronouslySetDelegate(delegate, delegateQueue: self.delegateQueue)
    }

    /// Sets the delegate queue, waiting as ``synchronouslySetDelegate(_:)`` does.
    public func synchronouslySetDelegateQueue(_ delegateQueue: DispatchQueue?) {
        synchronouslySetDelegate(self.delegate, delegateQueue: delegateQueue)
    }

    /// Sets both, waiting as ``synchronouslySetDelegate(_:)`` does.
    public func synchronouslySetDelegate(_ delegate: (any TCPSocketDelegate)?, delegateQueue: DispatchQueue?) {
        let (oldQueue, inCallback) = shared.withLock { shared -> (DispatchQueue?, Bool) in
            let old = shared.delegateQueue
            shared.delegate = delegate
            shared.delegateQueue = delegateQueue
            let inCallback = shared.callbackThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return (old, inCallback)
        }
        if let oldQueue, !inCallback { oldQueue.sync {} }
    }

    /// Calls the delegate on its queue (or inline on the loop when the queue is `nil`). The delegate is
    /// read when the call runs, so a delegate set to `nil` meanwhile is not called.
    func notify(_ call: @escaping (any TCPSocketDelegate) -> Void) {
        onDelegateQueue { delegate in
            if let delegate { call(delegate) }
        }
    }

    /// Asks the delegate for a timeout extension on its queue and hands the answer (seconds; 0 when
    /// there is no delegate) to `answer` on the loop.
    func askForExtension(
        _ question: @escaping (any TCPSocketDelegate) -> TimeInterval,
        answer: @escaping @Sendable (TimeInterval) -> Void
    ) {
        onDelegateQueue { [self] delegate in
            let extra = delegate.map(question) ?? 0
            onLoop { answer(extra) }
        }
    }

    /// Runs `body` on the delegate queue (inline when it is `nil`) with the delegate of that moment.
    private func onDelegateQueue(_ body: @escaping ((any TCPSocketDelegate)?) -> Void) {
        guard let queue = shared.withLock({ $0.delegateQueue }) else {
            withCurrentDelegate(body)
            return
        }
        let transfer = UnsafeTransfer(body)
        queue.async { [self] in withCurrentDelegate(transfer.value) }
    }

    private func withCurrentDelegate(_ body: ((any TCPSocketDelegate)?) -> Void) {
        // Callbacks may nest on the loop thread (a disconnect inside a read callback); restore the outer one's mark.
        let (delegate, outer) = shared.withLock { shared -> ((any TCPSocketDelegate)?, pthread_t?) in
            let outer = shared.callbackThread
            shared.callbackThread = pthread_self()
            return (shared.delegate, outer)
        }
        body(delegate)
        shared.withLock { $0.callbackThread = outer }
    }
}
