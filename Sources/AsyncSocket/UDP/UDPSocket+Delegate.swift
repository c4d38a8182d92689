import Dispatch
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One ``UDPSocketDelegate`` callback as a value, delivered inline on the loop thread or on the
/// delegate queue.
enum UDPDelegateEvent: @unchecked Sendable {
    // Unchecked: the filter context is the app's own `Sendable` value; the rest are values.
    case connected(SocketAddress)
    case notConnected(SocketError)
    case sent(tag: Int)
    case notSent(tag: Int, SocketError)
    case received(Data, from: SocketAddress, context: (any Sendable)?)
    case notReceived(from: SocketAddress?, SocketError)
    case closed(SocketError?)
}

extension UDPSocket {
    /// The delegate, held weakly. Safe to set from any thread (GCDAsyncUdpSocket's `setDelegate:`);
    /// see ``synchronouslySetDelegate(_:)`` for teardown.
    public var delegate: (any UDPSocketDelegate)? {
        get { shared.withLock { $0.delegate } }
        set { setDelegate(newValue, delegateQueue: delegateQueue) }
    }

    /// The queue delegate methods run on; `nil` means the event-loop thread.
    public var delegateQueue: DispatchQueue? {
        get { shared.withLock { $0.delegateQueue } }
        set { setDelegate(delegate, delegateQueue: newValue) }
    }

    /// Any value the app wants to keep with this socket (GCDAsyncUdpSocket's `userData`); never used here.
    public var userData: (any Sendable)? {
        get { shared.withLock { $0.userData } }
        set { shared.withLock { $0.userData = newValue } }
    }

    /// Sets the delegate and its queue together (GCDAsyncUdpSocket's `setDelegate:delegateQueue:`).
    public func setDelegate(_ delegate: (any UDPSocketDelegate)?, delegateQueue: DispatchQueue?) {
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

    /// Sets the delegate and returns once no callback can be running on the old one
    /// (GCDAsyncUdpSocket's `synchronouslySetDelegate:`). Call it from a delegate callback or from a
    /// thread other than the delegate queue; from a plain block on the delegate queue it would wait forever.
    public func synchronouslySetDelegate(_ delegate: (any UDPSocketDelegate)?) {
        synchronouslySetDelegate(delegate, delegateQueue: delegateQueue)
    }

    /// Sets the delegate queue, waiting as ``synchronouslySetDelegate(_:)`` does.
    public func synchronouslySetDelegateQueue(_ delegateQueue: DispatchQueue?) {
        synchronouslySetDelegate(delegate, delegateQueue: delegateQueue)
    }

    /// Sets both, waiting as ``synchronouslySetDelegate(_:)`` does.
    public func synchronouslySetDelegate(_ delegate: (any UDPSocketDelegate)?, delegateQueue: DispatchQueue?) {
        let (oldQueue, inCallback) = shared.withLock { shared -> (DispatchQueue?, Bool) in
            let old = shared.delegateQueue
            shared.delegate = delegate
            shared.delegateQueue = delegateQueue
            let inCallback = shared.callbackThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return (old, inCallback)
        }
        let transfer = UnsafeTransfer(delegate)
        _ = eventLoop.runAndWait { [self] in
            delegateOnLoop = transfer.value
            delegateQueueOnLoop = delegateQueue
            return true
        }
        if let oldQueue, !inCallback { oldQueue.sync {} }
    }

    /// Delivers `event` to the delegate of the moment: inline on the loop thread without a delegate
    /// queue, else on the delegate queue.
    func emit(_ event: UDPDelegateEvent) {
        if eventLoop.inEventLoop {
            emitOnLoop(event)
        } else {
            guard let queue = shared.withLock({ $0.delegateQueue }) else {
                onLoop { [self] in emit(event) }
                return
            }
            queue.async { [self] in withCurrentDelegate { if let delegate = $0 { deliver(event, to: delegate) } } }
        }
    }

    /// ``emit(_:)`` from code that runs on the loop thread only (the per-datagram paths of receiving
    /// and sending): no thread check.
    func emitOnLoop(_ event: UDPDelegateEvent) {
        eventLoop.assertInEventLoop()
        guard let queue = delegateQueueOnLoop else {
            if let delegate = delegateOnLoop { deliver(event, to: delegate) }
            return
        }
        queue.async { [self] in withCurrentDelegate { if let delegate = $0 { deliver(event, to: delegate) } } }
    }

    private func withCurrentDelegate(_ body: ((any UDPSocketDelegate)?) -> Void) {
        let delegate = shared.withLock { shared -> (any UDPSocketDelegate)? in
            shared.callbackThread = pthread_self()
            return shared.delegate
        }
        body(delegate)
        shared.withLock { $0.callbackThread = nil }
    }

    private func deliver(_ event: UDPDelegateEvent, to delegate: any UDPSocketDelegate) {
        switch event {
        case .connected(let address): delegate.udpSocket(self, didConnectToAddress: address)
        case .notConnected(let error): delegate.udpSocket(self, didNotConnect: error)
        case .sent(let tag): delegate.udpSocket(self, didSendDataWithTag: tag)
        case .notSent(let tag, let error): delegate.udpSocket(self, didNotSendDataWithTag: tag, dueToError: error)
        case .received(let data, let address, let context):
            delegate.udpSocket(self, didReceive: data, fromAddress: address, withFilterContext: context)
        case .notReceived(let address, let error): delegate.udpSocket(self, didNotReceiveDataFromAddress: address, dueToError: error)
        case .closed(let error): delegate.udpSocketDidClose(self, withError: error)
        }
    }
}
