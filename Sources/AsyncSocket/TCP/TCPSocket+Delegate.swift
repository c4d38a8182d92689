import Dispatch
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TCPSocket {
    /// The delegate, held weakly. Safe to set from any thread. With a delegate queue, no callback that
    /// has not started yet reaches the old delegate once this returns; without one (callbacks on the
    /// loop thread), the change reaches the loop with a hop, so use ``synchronouslySetDelegate(_:)``
    /// from other threads when that matters.
    public var delegate: (any TCPSocketDelegate)? {
        get { shared.withLock { $0.delegate } }
        set { setDelegate(newValue, delegateQueue: delegateQueue) }
    }

    /// The queue delegate methods run on; `nil` means the event-loop thread.
    public var delegateQueue: DispatchQueue? {
        get { shared.withLock { $0.delegateQueue } }
        set { setDelegate(delegate, delegateQueue: newValue) }
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
        let transfer = UnsafeTransfer(delegate)
        onLoop { [self] in
            delegateOnLoop = transfer.value
            delegateQueueOnLoop = delegateQueue
        }
    }

    /// Sets the delegate and returns once no callback can be running on the old one, for teardown:
    /// after `synchronouslySetDelegate(nil)` returns, the old delegate is never called again
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
        // The loop's copy is updated before this returns, so no loop-thread callback starts afterwards.
        let transfer = UnsafeTransfer(delegate)
        _ = eventLoop.runAndWait { [self] in
            delegateOnLoop = transfer.value
            delegateQueueOnLoop = delegateQueue
            return true
        }
        if let oldQueue, !inCallback { oldQueue.sync {} }
    }

    /// Asks the delegate for a timeout extension on its queue and hands the answer (seconds; 0 when
    /// there is no delegate) to `answer` on the loop. Loop thread only.
    func askForExtension(
        _ question: @escaping (any TCPSocketDelegate) -> TimeInterval,
        answer: @escaping @Sendable (TimeInterval) -> Void
    ) {
        guard let queue = delegateQueueOnLoop else {
            answer(delegateOnLoop.map(question) ?? 0)
            return
        }
        let transfer = UnsafeTransfer(question)
        queue.async { [self] in
            withCurrentDelegate { delegate in
                let extra = delegate.map(transfer.value) ?? 0
                onLoop { answer(extra) }
            }
        }
    }

    /// Runs `body` with the delegate of this moment, marking this thread as running a callback of this
    /// socket (for ``synchronouslySetDelegate(_:)``). Delegate-queue callbacks only.
    func withCurrentDelegate(_ body: ((any TCPSocketDelegate)?) -> Void) {
        let delegate = shared.withLock { shared -> (any TCPSocketDelegate)? in
            shared.callbackThread = pthread_self()
            return shared.delegate
        }
        body(delegate)
        shared.withLock { $0.callbackThread = nil }
    }
}
