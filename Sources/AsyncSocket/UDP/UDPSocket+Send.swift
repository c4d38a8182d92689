import Foundation

extension UDPSocket {
    /// A send filter (GCDAsyncUdpSocket's `GCDAsyncUdpSocketSendFilterBlock`): given the datagram, its
    /// destination and its tag, returns whether to send it. A datagram it refuses is reported with
    /// ``SocketError/sendFiltered(tag:)`` (GCDAsyncUdpSocket reports those as sent).
    public typealias SendFilter = @Sendable (_ data: Data, _ address: SocketAddress, _ tag: Int) -> Bool

    struct SendFilterSetting: Sendable {
        let filter: SendFilter
        let queue: DispatchQueue?
        let isAsynchronous: Bool
    }

    /// Queues `data` for the connected peer (GCDAsyncUdpSocket's `sendData:withTimeout:tag:`), after
    /// every send queued before it. The outcome arrives as ``UDPSocketDelegate/udpSocket(_:didSendDataWithTag:)``
    /// or ``UDPSocketDelegate/udpSocket(_:didNotSendDataWithTag:dueToError:)`` (with
    /// ``SocketError/notConnected`` when the socket is not connected, or connecting through an earlier
    /// queued connect, by the time the send is due). Empty data is sent as an empty datagram
    /// (GCDAsyncUdpSocket ignores it).
    ///
    /// - Parameters:
    ///   - data: one datagram's payload (empty is allowed).
    ///   - timeout: seconds from when the send reaches the head of the queue; negative means none. On
    ///     expiry only this send fails, with ``SocketError/sendTimeout(tag:)``.
    ///   - tag: handed back in the callback, never sent.
    public func send(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        enqueue(UDPSendRequest(kind: .datagram(data), destination: .peer, timeout: timeout, tag: tag))
    }

    /// Queues `data` for `host` (a name or a numeric IPv4/IPv6 address; `"localhost"` and `"loopback"`
    /// work) on `port` (GCDAsyncUdpSocket's `sendData:toHost:port:withTimeout:tag:`). Names resolve on a
    /// global dispatch queue, never on the event loop; the address used is picked by
    /// ``ipVersionPreference`` among the enabled families. Fails with ``SocketError/badConfig(_:)`` on a
    /// connected socket, and with ``SocketError/hostLookupFailed(host:code:)`` when the name does not resolve.
    ///
    /// - Parameters:
    ///   - data: one datagram's payload (empty is allowed).
    ///   - host: a host name or a numeric IPv4/IPv6 address.
    ///   - port: host byte order.
    ///   - timeout: seconds from when the send reaches the head of the queue (resolution still running
    ///     counts); negative means none.
    ///   - tag: handed back in the callback, never sent.
    public func send(_ data: Data, toHost host: String, port: UInt16, withTimeout timeout: TimeInterval, tag: Int) {
        let lookup = host == "loopback" ? "localhost" : host
        if let literal = SocketAddress(ipAddress: lookup, port: port) {
            send(data, to: literal, withTimeout: timeout, tag: tag)
            return
        }
        enqueue(
            UDPSendRequest(kind: .datagram(data), destination: .resolving(host: lookup), timeout: timeout, tag: tag), resolvingPort: port)
    }

    /// Queues `data` for `address` (GCDAsyncUdpSocket's `sendData:toAddress:withTimeout:tag:`).
    /// Fails on a connected socket as ``send(_:toHost:port:withTimeout:tag:)`` does.
    public func send(_ data: Data, to address: SocketAddress, withTimeout timeout: TimeInterval, tag: Int) {
        enqueue(UDPSendRequest(kind: .datagram(data), destination: .address(address), timeout: timeout, tag: tag))
    }

    /// Queues `data` for the `sockaddr` in `address` (GCDAsyncUdpSocket's `sendData:toAddress:…` with
    /// `NSData`). Bytes that are not an IPv4 or IPv6 `sockaddr` fail the send with ``SocketError/badParam(_:)``.
    public func send(_ data: Data, toAddress address: Data, withTimeout timeout: TimeInterval, tag: Int) {
        guard let parsed = SocketAddress(sockaddr: address), parsed.family != .unix else {
            emit(.notSent(tag: tag, .badParam("not an IPv4 or IPv6 sockaddr")))
            return
        }
        send(data, to: parsed, withTimeout: timeout, tag: tag)
    }

    /// Sets the send filter, run on `queue` (GCDAsyncUdpSocket's `setSendFilter:withQueue:isAsynchronous:`)
    /// for each datagram when it reaches the head of the queue, after its name resolved; `nil` removes
    /// it. With a filter set, datagrams go out one per system call.
    ///
    /// - Parameters:
    ///   - filter: shown each datagram, its destination and its tag; returns true to send it (see
    ///     ``SendFilter``: a refused one fails with ``SocketError/sendFiltered(tag:)``).
    ///   - queue: a serial queue for the filter; `nil` runs it on the event-loop thread (it must then be quick).
    ///   - isAsynchronous: true: the loop goes on while the filter runs and the send waits for its
    ///     verdict (its timeout keeps running); false: the loop waits for it (`DispatchQueue.sync`), so
    ///     the filter must never wait for this socket.
    public func setSendFilter(_ filter: SendFilter?, withQueue queue: DispatchQueue?, isAsynchronous: Bool = true) {
        shared.withLock { $0.sendFilter = filter.map { SendFilterSetting(filter: $0, queue: queue, isAsynchronous: isAsynchronous) } }
    }

    /// Puts `request` on the queue on the loop and resolves its host name if it has one. Called on the
    /// loop (a send from a delegate callback without a delegate queue: an echo, say), it queues inline,
    /// with no task or closure per datagram.
    func enqueue(_ request: consuming UDPSendRequest, resolvingPort port: UInt16 = 0) {
        guard eventLoop.inEventLoop else {
            let request = copy request
            eventLoop.execute { [self] in append(request, resolvingPort: port) }
            return
        }
        append(request, resolvingPort: port)
    }

    /// The loop side of ``enqueue(_:resolvingPort:)``: refuses a datagram after ``closeAfterSending()``
    /// (checked on the loop, in the order the calls were made: a send asked for before that call is
    /// sent even when its task runs after the call returned), binds implicitly, queues and schedules a
    /// flush.
    private func append(_ request: consuming UDPSendRequest, resolvingPort port: UInt16) {
        var request = request
        if case .datagram = request.kind {
            if closesAfterSends {
                emit(.notSent(tag: request.tag, .disconnecting))
                return
            }
            let bound = shared.withLock { $0.isBound }
            switch request.destination {
            case .resolving, .address:
                // A send to an address binds the socket implicitly, as in GCDAsyncUdpSocket: it may
                // receive from now on (on the port the kernel picks at the first send).
                if !bound || channels.isEmpty {
                    try? ensureChannels()
                    if !channels.isEmpty && !shared.withLock({ $0.isBound }) { didBind() }
                }
            case .peer, .failed:
                break
            }
        }
        nextRequestID &+= 1
        request.id = nextRequestID
        let id = request.id
        let host: String? = if case .resolving(let host) = request.destination { host } else { nil }
        sendQueue.append(request)
        if let host { resolve(host, port: port, for: id) }
        scheduleFlush()
    }

    /// Resolves `host` off the loop and sets the destination of the queued entry `id`.
    private func resolve(_ host: String, port: UInt16, for id: UInt64) {
        let life = generation
        Resolver.resolveAsync(host: host, port: port) { [self] result in
            onLoop { [self] in
                guard life == generation, let index = sendQueue.firstIndex(where: { $0.id == id }) else { return }
                switch result {
                case .success(let addresses):
                    switch pick(from: addresses) {
                    case .success(let address): sendQueue[index].destination = .address(address)
                    case .failure(let error): sendQueue[index].destination = .failed(error)
                    }
                case .failure(let error):
                    sendQueue[index].destination = .failed(error)
                }
                scheduleFlush()
            }
        }
    }

    /// The address of an enabled family that ``ipVersionPreference`` picks from `addresses`.
    func pick(from addresses: [SocketAddress]) -> Result<SocketAddress, SocketError> {
        let options = shared.withLock { $0.options }
        let usable = addresses.filter { $0.family == .inet ? options.isIPv4Enabled : ($0.family == .inet6 && options.isIPv6Enabled) }
        let preferred: SocketAddress.Family? =
            switch options.preference {
            case .neutral: nil
            case .ipv4: .inet
            case .ipv6: .inet6
            }
        if let preferred, let match = usable.first(where: { $0.family == preferred }) { return .success(match) }
        guard let first = usable.first else {
            return .failure(
                .badConfig(
                    "no address of an enabled family (IPv4 \(options.isIPv4Enabled ? "on" : "off"), IPv6 \(options.isIPv6Enabled ? "on" : "off"))"
                ))
        }
        return .success(first)
    }

    /// Flushes the queue soon, as a loop task, so sends queued together go out together; while a batch
    /// of received datagrams is being delivered on the loop, at the end of that batch instead (the
    /// echoes of a batch go out in one `sendmmsg(2)` with no task per batch).
    func scheduleFlush() {
        guard !flushScheduled else { return }
        if deliveringReads {
            flushAfterReads = true
            return
        }
        flushScheduled = true
        eventLoop.execute { [self] in
            flushScheduled = false
            flushSends()
        }
    }
}
