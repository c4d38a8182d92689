import Dispatch
import Foundation

/// One delegate callback as a value: made where the event happens, then delivered inline on the loop
/// thread (no delegate queue: no allocation, no lock) or on the delegate queue.
enum DelegateEvent: Sendable {
    case connectedToHost(String, port: UInt16)
    case connectedToUrl(URL)
    case read(Data, tag: Int)
    /// A read queued with a completion handler completed: called inline on the loop, never sent to the delegate.
    case handled(@Sendable (Result<Data, SocketError>) -> Void, Data)
    case readPartial(UInt, tag: Int)
    case wrote(tag: Int)
    case wrotePartial(UInt, tag: Int)
    case readStreamClosed
    case secured
    case receivedTrust(TLSPeerTrust, @Sendable (Bool) -> Void)
    case rejectedRead(tag: Int, SocketError)
    case rejectedWrite(tag: Int, SocketError)
    case highWatermark(Int)
    case lowWatermark(Int)
    case willDisconnect(unread: Data, unsentTags: [Int])
    case disconnected(SocketError?)
}

extension TCPSocket {
    /// Delivers `event` to the delegate of the moment: inline when the socket has no delegate queue
    /// and this is the loop thread, otherwise on the delegate queue (reading the delegate there).
    @inline(__always)
    func emit(_ event: DelegateEvent) {
        if eventLoop.inEventLoop {
            guard let queue = delegateQueueOnLoop else {
                if let delegate = delegateOnLoop { deliver(event, to: delegate) }
                return
            }
            queue.async { [self] in withCurrentDelegate { if let delegate = $0 { deliver(event, to: delegate) } } }
        } else {
            // Called from another thread (a request rejected before it reached the loop).
            guard let queue = shared.withLock({ $0.delegateQueue }) else {
                onLoop { [self] in emit(event) }
                return
            }
            queue.async { [self] in withCurrentDelegate { if let delegate = $0 { deliver(event, to: delegate) } } }
        }
    }

    private func deliver(_ event: DelegateEvent, to delegate: any TCPSocketDelegate) {
        switch event {
        case .connectedToHost(let host, let port): delegate.socket(self, didConnectToHost: host, port: port)
        case .connectedToUrl(let url): delegate.socket(self, didConnectToUrl: url)
        case .read(let data, let tag): delegate.socket(self, didRead: data, withTag: tag)
        case .handled(let handler, let data): handler(.success(data))
        case .readPartial(let length, let tag): delegate.socket(self, didReadPartialDataOfLength: length, tag: tag)
        case .wrote(let tag): delegate.socket(self, didWriteDataWithTag: tag)
        case .wrotePartial(let length, let tag): delegate.socket(self, didWritePartialDataOfLength: length, tag: tag)
        case .readStreamClosed: delegate.socketDidCloseReadStream(self)
        case .secured: delegate.socketDidSecure(self)
        case .receivedTrust(let trust, let answer): delegate.socket(self, didReceiveTrust: trust, completionHandler: answer)
        case .rejectedRead(let tag, let error): delegate.socket(self, didRejectReadWithTag: tag, error: error)
        case .rejectedWrite(let tag, let error): delegate.socket(self, didRejectWriteWithTag: tag, error: error)
        case .highWatermark(let bytes): delegate.socket(self, writeQueueDidExceedHighWatermark: bytes)
        case .lowWatermark(let bytes): delegate.socket(self, writeQueueDidFallToLowWatermark: bytes)
        case .willDisconnect(let unread, let tags): delegate.socketWillDisconnect(self, unreadData: unread, unsentWriteTags: tags)
        case .disconnected(let error): delegate.socketDidDisconnect(self, withError: error)
        }
    }
}
