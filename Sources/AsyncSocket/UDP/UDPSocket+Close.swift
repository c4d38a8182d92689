import Foundation

extension UDPSocket {
    /// Closes the socket now (GCDAsyncUdpSocket's `close`): its descriptors close, receiving stops, every
    /// send still queued is reported through ``UDPSocketDelegate/udpSocket(_:didNotSendDataWithTag:dueToError:)``
    /// with ``SocketError/connectionClosed`` (a queued connect through ``UDPSocketDelegate/udpSocket(_:didNotConnect:)``),
    /// then ``UDPSocketDelegate/udpSocketDidClose(_:withError:)`` follows with a `nil` error when the
    /// socket had descriptors. The socket may be bound, connected and used again afterwards; its
    /// options and filters are kept.
    public func close() {
        onLoop { [self] in close(error: nil) }
    }

    /// Closes once every queued send has been sent or has failed (GCDAsyncUdpSocket's
    /// `closeAfterSending`); at once when none is queued. Every send asked for before this call (from
    /// any thread that made it before) is sent first; sends, connects and binds asked for afterwards fail
    /// with ``SocketError/disconnecting``.
    public func closeAfterSending() {
        shared.withLock { $0.closingAfterSends = true }
        onLoop { [self] in
            closesAfterSends = true
            if sendQueue.isEmpty { close(error: nil) } else { scheduleFlush() }
        }
    }

    /// Ends this life of the socket: one pass that closes the descriptors, resets every per-life state
    /// and reports what was pending, then the close. Loop thread only.
    func close(error: SocketError?) {
        eventLoop.assertInEventLoop()
        let hadDescriptors = !channels.isEmpty
        generation &+= 1
        sendTimeout.cancel()
        let pending = sendQueue.removeAll()
        closeChannels()
        receiveMode = .off
        awaitingReceiveFilter = false
        closesAfterSends = false
        shared.withLock {
            $0.connectStage = .none
            $0.connectedAddress = nil
            $0.localIPv4 = nil
            $0.localIPv6 = nil
            $0.isBound = false
            $0.closingAfterSends = false
        }
        for request in pending {
            switch request.kind {
            case .datagram: emit(.notSent(tag: request.tag, error ?? .connectionClosed))
            case .connect: emit(.notConnected(error ?? .connectionClosed))
            }
        }
        if hadDescriptors { emit(.closed(error)) }
    }
}
