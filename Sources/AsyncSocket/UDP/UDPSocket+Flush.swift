import Foundation

extension UDPSocket {
    /// What the entry at the head of the queue (or one behind it) needs now.
    private enum Readiness {
        /// It waits: for its name, its filter's verdict or (for one behind the head) its turn.
        case wait
        /// It fails with this error.
        case fail(SocketError)
        /// A connect to this address.
        case connect(SocketAddress)
        /// A datagram for this descriptor, to this address (`nil` on a connected socket).
        case send(DatagramChannel, SocketAddress?)
    }

    /// What ``readiness(of:atHead:in:)`` reads from the shared state: taken once per batch, under one lock.
    private struct SendContext {
        var options: Options
        /// The connected peer, if connected.
        var peer: SocketAddress?
        var filter: SendFilterSetting?
    }

    private func sendContext() -> SendContext {
        shared.withLock { shared in
            SendContext(
                options: shared.options, peer: shared.connectStage == .connected ? shared.connectedAddress : nil,
                filter: shared.sendFilter)
        }
    }

    /// Sends what the queue holds, in order, until it is empty, a send would block, or the head waits
    /// (for a name, a filter, a connect's resolution). Datagrams for the same descriptor go out up to
    /// ``DatagramBatch/capacity`` per `sendmmsg(2)`. A failed datagram fails alone. Loop thread only.
    func flushSends() {
        eventLoop.assertInEventLoop()
        let life = generation
        while life == generation, let head = sendQueue.first {
            armSendTimer()
            let context = sendContext()
            switch readiness(of: head, atHead: true, in: context) {
            case .wait:
                return
            case .fail(let error):
                completeHead(with: error)
            case .connect(let address):
                sendQueue.removeFirst()
                performConnect(to: address)
            case .send(let channel, let destination):
                guard !channel.writeBlocked else { return }
                sendBatch(on: channel, first: destination, in: context)
                if channel.writeBlocked { return }
            }
        }
        guard life == generation else { return }
        sendTimeout.cancel()
        if sendQueue.isEmpty && closesAfterSends { close(error: nil) }
    }

    /// Sends the head datagram and the ready ones behind it for the same descriptor in one call. Each
    /// queued entry is looked at once (its payload and destination go in an array lent by the loop), and
    /// the tags of the sent ones go in another: nothing is allocated per batch.
    private func sendBatch(on channel: DatagramChannel, first destination: SocketAddress?, in context: SendContext) {
        let batch = eventLoop.datagramBatch
        var outgoing: [DatagramBatch.Outgoing] = []
        let head =
            sendQueue.withFirst { request -> Data in
                if case .datagram(let data) = request.kind { return data }
                return Data()
            } ?? Data()
        batch.spareOutgoing.append((head, destination), to: &outgoing)
        let limit = min(DatagramBatch.capacity, sendQueue.count)
        while outgoing.count < limit {
            let request = sendQueue[outgoing.count]
            guard case .send(let next, let nextDestination) = readiness(of: request, atHead: false, in: context),
                next === channel, case .datagram(let data) = request.kind
            else { break }
            batch.spareOutgoing.append((data, nextDestination), to: &outgoing)
        }
        let outcome = batch.send(channel.fd, outgoing)
        batch.spareOutgoing.giveBack(&outgoing)
        if outcome != .wouldBlock,
            (channel.family == .inet ? shared.withLock({ $0.localIPv4 }) : shared.withLock({ $0.localIPv6 }))?.port == 0
        {
            // The first send bound the descriptor to a port of the kernel's choosing.
            refreshLocalAddresses()
        }
        switch outcome {
        case .sent(let count):
            // Every sent entry leaves the queue before the first callback, which may close the socket.
            var tags: [Int] = []
            for _ in 0..<count { eventLoop.spareTagArrays.append(sendQueue.removeFirst().tag, to: &tags) }
            for tag in tags { emitOnLoop(.sent(tag: tag)) }
            eventLoop.spareTagArrays.giveBack(&tags)
        case .wouldBlock:
            channel.writeBlocked = true
            updateInterest()
        case .failed(let error):
            completeHead(with: error)
        }
    }

    /// Takes the head off the queue and reports it failed with `error`.
    private func completeHead(with error: SocketError) {
        let request = sendQueue.removeFirst()
        if case .connect = request.kind {
            shared.withLock { $0.connectStage = .none }
            emit(.notConnected(error))
        } else {
            emit(.notSent(tag: request.tag, error))
        }
    }

    /// What `request` needs now. At the head, a filter may run (or start) and descriptors may be made;
    /// behind the head nothing with side effects happens, and anything not plainly ready waits.
    private func readiness(of request: UDPSendRequest, atHead: Bool, in context: SendContext) -> Readiness {
        if request.isFiltering { return .wait }
        let (options, peer, filter) = (context.options, context.peer, context.filter)
        let destination: SocketAddress?
        switch request.destination {
        case .resolving: return .wait
        case .failed(let error): return .fail(error)
        case .peer:
            guard let peer else { return .fail(.notConnected) }
            destination = nil
            if case .connect = request.kind { return .fail(.badConfig("connect without an address")) }
            guard let channel = channels.first else { return .fail(.notConnected) }
            if case .datagram(let data) = request.kind, data.count > Int(options.maxSendBufferSize) {
                return .fail(.datagramTooLarge(size: data.count, maxSendSize: Int(options.maxSendBufferSize)))
            }
            return filtered(request, channel: channel, destination: destination, filterAddress: peer, filter: filter, atHead: atHead)
        case .address(let address):
            if case .connect = request.kind { return .connect(address) }
            guard peer == nil else {
                return .fail(.badConfig("Cannot send data to a specific address on a connected socket."))
            }
            let family = address.family
            guard family == .inet ? options.isIPv4Enabled : (family == .inet6 && options.isIPv6Enabled) else {
                return .fail(.badConfig("cannot send to \(address): its family is disabled or not IP"))
            }
            if case .datagram(let data) = request.kind, data.count > Int(options.maxSendBufferSize) {
                return .fail(.datagramTooLarge(size: data.count, maxSendSize: Int(options.maxSendBufferSize)))
            }
            if atHead {
                do { try ensureChannels() } catch { return .fail(error) }
            }
            guard let channel = channel(family) else {
                return atHead
                    ? .fail(
                        .badConfig(
                            "the socket has no \(family == .inet ? "IPv4" : "IPv6") descriptor (bound or connected to the other family)"))
                    : .wait
            }
            return filtered(request, channel: channel, destination: address, filterAddress: address, filter: filter, atHead: atHead)
        }
    }

    /// Applies the send filter to a datagram otherwise ready.
    private func filtered(
        _ request: UDPSendRequest, channel: DatagramChannel, destination: SocketAddress?,
        filterAddress: SocketAddress, filter: SendFilterSetting?, atHead: Bool
    ) -> Readiness {
        guard let filter, !request.filterPassed else { return .send(channel, destination) }
        guard atHead, case .datagram(let data) = request.kind else { return .wait }
        let (tag, id) = (request.tag, request.id)
        let verdict: (Bool) -> Readiness = { [self] accepted in
            guard accepted else { return .fail(.sendFiltered(tag: tag)) }
            sendQueue.updateFirst { $0.filterPassed = true }
            return .send(channel, destination)
        }
        guard let queue = filter.queue else { return verdict(filter.filter(data, filterAddress, tag)) }
        guard filter.isAsynchronous else { return verdict(queue.sync { filter.filter(data, filterAddress, tag) }) }
        sendQueue.updateFirst { $0.isFiltering = true }
        let life = generation
        queue.async { [self] in
            let accepted = filter.filter(data, filterAddress, tag)
            onLoop { [self] in
                guard life == generation, let index = sendQueue.firstIndex(where: { $0.id == id }) else { return }
                if accepted {
                    sendQueue[index].isFiltering = false
                    sendQueue[index].filterPassed = true
                } else {
                    // The head again (it waited at the head); fail it in order.
                    sendQueue[index].isFiltering = false
                    sendQueue[index].destination = .failed(.sendFiltered(tag: tag))
                }
                flushSends()
            }
        }
        return .wait
    }

    // MARK: Timeouts

    /// Starts the timeout of the head entry when it has one and it is not running yet.
    private func armSendTimer() {
        let head = sendQueue.first
        sendTimeout.follow(head?.id, timeout: head?.timeout ?? -1) {
            let id = head?.id ?? 0
            let deadline = eventLoop.now() &+ Duration.seconds(head?.timeout ?? 0).nanosecondsClamped
            let timer = eventLoop.scheduleTask(atNanoseconds: deadline) { [self] in sendTimedOut(id) }
            return (timer, deadline)
        }
    }

    private func sendTimedOut(_ id: UInt64) {
        guard let head = sendQueue.first, head.id == id else { return }
        sendTimeout.cancel()
        if case .connect = head.kind {
            completeHead(with: .connectTimeout)
        } else {
            completeHead(with: .sendTimeout(tag: head.tag))
        }
        flushSends()
    }
}
