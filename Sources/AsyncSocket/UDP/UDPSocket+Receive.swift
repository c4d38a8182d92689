import Dispatch
import Foundation

extension UDPSocket {
    /// A receive filter (GCDAsyncUdpSocket's `GCDAsyncUdpSocketReceiveFilterBlock`): given a datagram and
    /// its sender, returns whether to deliver it, and may set `context`, which the delegate receives
    /// as `filterContext` (a parsed message, say). A refused datagram is dropped without a callback and
    /// does not use up a ``receiveOnce()``.
    public typealias ReceiveFilter = @Sendable (_ data: Data, _ address: SocketAddress, _ context: inout (any Sendable)?) -> Bool

    struct ReceiveFilterSetting: Sendable {
        let filter: ReceiveFilter
        let queue: DispatchQueue?
        let isAsynchronous: Bool
    }

    /// One datagram read from the kernel, copied out of the loop's shared buffer.
    struct Arrival {
        var data: Data
        var sender: SocketAddress
        /// The full length of a datagram longer than the receive size, else `nil`.
        var truncatedLength: Int?
    }

    /// Receives one datagram (GCDAsyncUdpSocket's `receiveOnce:`): the next one that arrives whole and
    /// that the receive filter accepts is delivered through
    /// ``UDPSocketDelegate/udpSocket(_:didReceive:fromAddress:withFilterContext:)``, then receiving stops
    /// until the next call. Switches a continuously receiving socket to one-at-a-time. Datagrams that
    /// arrive meanwhile wait in the kernel's receive buffer (`SO_RCVBUF`), which drops what does not fit.
    ///
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is not bound ("Must bind socket before you
    ///   can receive data."): bind it, connect it or queue a send to an address first.
    public func receiveOnce() throws(SocketError) {
        try startReceiving(.once)
    }

    /// Receives every datagram as it arrives (GCDAsyncUdpSocket's `beginReceiving:`), up to 32 per
    /// `recvmmsg(2)`, until ``pauseReceiving()`` or ``close()``.
    /// - Throws: as ``receiveOnce()``.
    public func beginReceiving() throws(SocketError) {
        try startReceiving(.continuous)
    }

    /// Stops reading from the kernel (GCDAsyncUdpSocket's `pauseReceiving`) until ``receiveOnce()`` or
    /// ``beginReceiving()``: datagrams wait in the kernel's buffer, which drops what does not fit. Waits
    /// for the loop, so no datagram is read after this returns; those read before (at most one batch of
    /// 32) are still delivered, so with a delegate queue a callback may follow this call. Never call it
    /// from a synchronous filter's queue.
    public func pauseReceiving() {
        _ = eventLoop.runAndWait { [self] in
            receiveMode = .off
            updateInterest()
            return true
        }
    }

    /// Sets the receive filter (GCDAsyncUdpSocket's `setReceiveFilter:withQueue:isAsynchronous:`); `nil`
    /// removes it.
    ///
    /// - Parameters:
    ///   - filter: shown each datagram and its sender; returns true to deliver it (see ``ReceiveFilter``).
    ///   - queue: a serial queue for the filter; `nil` runs it on the event-loop thread (it must then be quick).
    ///   - isAsynchronous: true: the filter runs with `DispatchQueue.async` and accepted datagrams go on to
    ///     the delegate from there, in arrival order (during a ``receiveOnce()`` reading waits for the
    ///     verdict); false: the loop waits for it (`DispatchQueue.sync`), so it must never wait for this socket.
    public func setReceiveFilter(_ filter: ReceiveFilter?, withQueue queue: DispatchQueue?, isAsynchronous: Bool = true) {
        shared.withLock { $0.receiveFilter = filter.map { ReceiveFilterSetting(filter: $0, queue: queue, isAsynchronous: isAsynchronous) } }
    }

    private func startReceiving(_ mode: ReceiveMode) throws(SocketError) {
        try onLoopAndWait { [self] () throws(SocketError) in
            guard shared.withLock({ $0.isBound }) else {
                throw SocketError.badConfig(
                    "Must bind socket before you can receive data. You can do this explicitly via bind, or implicitly via connect or by sending data."
                )
            }
            receiveMode = mode
            updateInterest()
        }
    }

    /// `channel` is readable: one `recvmmsg(2)` (of one datagram in once mode), then delivery. Loop thread only.
    func channelReadable(_ channel: DatagramChannel) {
        guard receiveMode != .off, !awaitingReceiveFilter else {
            updateInterest()
            return
        }
        let options = shared.withLock { $0.options }
        let batch = eventLoop.datagramBatch
        let scratch = batch.receiveBuffer
        let maxSize =
            channel.family == .inet
            ? Int(options.maxReceiveIPv4BufferSize)
            : Int(min(options.maxReceiveIPv6BufferSize, UInt32(EventLoop.scratchBytes)))
        var arrivals: [Arrival] = []
        let family = channel.family
        do {
            let received = try batch.receive(
                channel.fd, count: receiveMode == .once ? 1 : min(max(1, receiveBatchLimit), DatagramBatch.capacity), slotBytes: maxSize,
                scratch: scratch
            ) { bytes, sender, fullLength, truncated in
                let from = sender ?? .any(family, port: 0)
                batch.spareArrivals.append(
                    truncated
                        ? Arrival(data: Data(), sender: from, truncatedLength: fullLength)
                        : Arrival(data: Data(bytes), sender: from, truncatedLength: nil),
                    to: &arrivals)
            }
            guard received != nil else { return }
        } catch {
            // An error left by an ICMP message (a refused port on a connected socket): reported, not fatal.
            emit(.notReceived(from: nil, error))
            return
        }
        let filter = shared.withLock { $0.receiveFilter }
        deliveringReads = true
        for arrival in arrivals {
            if let length = arrival.truncatedLength {
                emit(.notReceived(from: arrival.sender, .datagramTruncated(size: length, maxReceiveSize: maxSize)))
                continue
            }
            deliver(arrival, filter: filter)
        }
        // The array is lent by the loop for this pass (no allocation per batch); a callback above that
        // made another socket of the loop read borrowed another one.
        batch.spareArrivals.giveBack(&arrivals)
        deliveringReads = false
        if flushAfterReads {
            flushAfterReads = false
            flushSends()
        }
        updateInterest()
    }

    /// Hands a whole datagram to the filter (if any) and the delegate; ends a ``receiveOnce()`` when
    /// it is delivered.
    private func deliver(_ arrival: Arrival, filter: ReceiveFilterSetting?) {
        guard let filter else {
            if receiveMode == .once { receiveMode = .off }
            emitOnLoop(.received(arrival.data, from: arrival.sender, context: nil))
            return
        }
        let run: @Sendable () -> (Bool, UnsafeTransfer<(any Sendable)?>) = {
            var context: (any Sendable)?
            let accepted = filter.filter(arrival.data, arrival.sender, &context)
            return (accepted, UnsafeTransfer(context))
        }
        let verdict: ((Bool, UnsafeTransfer<(any Sendable)?>)) -> Void = { [self] outcome in
            guard outcome.0 else { return }
            if receiveMode == .once { receiveMode = .off }
            emit(.received(arrival.data, from: arrival.sender, context: outcome.1.value))
        }
        guard let queue = filter.queue else { return verdict(run()) }
        guard filter.isAsynchronous else { return verdict(queue.sync(execute: run)) }
        let once = receiveMode == .once
        if once { awaitingReceiveFilter = true }
        let life = generation
        queue.async { [self] in
            let outcome = run()
            // Delivered from the filter's queue, in the order the filter saw the datagrams.
            if outcome.0 { emit(.received(arrival.data, from: arrival.sender, context: outcome.1.value)) }
            guard once else { return }
            onLoop { [self] in
                guard life == generation else { return }
                awaitingReceiveFilter = false
                if outcome.0 && receiveMode == .once { receiveMode = .off }
                updateInterest()
            }
        }
    }
}
