import AsyncSocket
import Foundation

/// The connected state: the greeting, writing, heartbeats, reading and closing after sending.
extension LinkMachine {
    mutating func connected(host: String, port: UInt16, greeting: Codec.Message?) {
        guard case .connecting(let endpoint) = state else { return }
        enter(.connected(LinkConnection()))
        if let smart {
            smart.probe = nil
            smart.lastTraffic = now
            if let refreshed = smart.refreshNetwork() { report(refreshed) }
        }
        // Everything written and read from here on waits for the handshake (startTLS is a barrier).
        if var tls = configuration.tls {
            // Verified as the endpoint connected to unless the app named the server itself.
            if tls.role == .client && tls.peerName == nil { tls.peerName = endpoint.host }
            perform(.startTLS(tls))
        }
        if let greeting = delivery?.greeting() ?? greeting {
            writeControl(greeting)
            modifyConnection { $0.awaitsGreetingReply = true }
        }
        // Reliable delivery: the unacknowledged messages first, in id order, as the window allows.
        pumpOutbox()
        for message in takeQueued() { write(message) }
        scheduleHeartbeat()
        scheduleHealthyReset()
        perform(.startReading)
        // Reported once the link is fully set up, so an observer that reacts (or a test that advances
        // virtual time) sees the heartbeat timer already running.
        emit(.connected(host: host, port: port))
        if closeWhenDrained && state.isConnected { startDrain() }
    }

    /// Starts the reconnect schedule over once this connection has stayed up for
    /// ``LongLinkClient/Configuration/linkHealthyAfter``; a drop before then cancels the timer.
    private mutating func scheduleHealthyReset() {
        let healthyAfter = configuration.linkHealthyAfter ?? configuration.heartbeatInterval
        guard healthyAfter > .zero else {
            schedule.reset()
            return
        }
        perform(.schedule(.healthy, after: healthyAfter))
    }

    // MARK: Writing

    mutating func write(_ message: Codec.Message) {
        let data: Data
        do {
            data = try codec.encode(message)
        } catch {
            emit(.sendFailed(message, .encodingFailed("\(error)")))
            return
        }
        let tag = makeTag()
        modifyConnection { $0.inflight.append(message, tag: tag) }
        perform(.write(data, tag: tag))
        noteTraffic()
    }

    mutating func writeControl(_ message: Codec.Message) {
        guard let data = try? codec.encode(message) else { return }
        writeControl(data)
    }

    private mutating func writeControl(_ data: Data) {
        perform(.write(data, tag: Self.controlTag))
        noteTraffic()
    }

    /// With a smart heartbeat: the link is not idle now (a message written or read).
    private func noteTraffic() {
        if let smart { smart.lastTraffic = now }
    }

    /// Writes the outbox messages the window lets out (after the greeting, on a connection whose socket
    /// has room, outside a pause).
    mutating func pumpOutbox() {
        guard let delivery, let connection, !connection.sendPaused, connection.retryDeadline == nil else { return }
        while let frame = delivery.nextFrame() { writeControl(frame) }
    }

    /// The socket caught up: send what waited in the offline queue meanwhile.
    mutating func resumeSending() {
        modifyConnection { $0.sendPaused = false }
        pumpOutbox()
        guard state.isConnected, !closeWhenDrained else { return }
        for message in takeQueued() { write(message) }
    }

    // MARK: Heartbeat

    private mutating func scheduleHeartbeat() {
        guard let smart else {
            perform(.schedule(.heartbeat, after: configuration.heartbeatInterval))
            return
        }
        // The smart heartbeat: once the link has been idle for the current interval, a heartbeat that
        // probes it (traffic meanwhile puts it off, as Netty's IdleStateHandler does its idle events).
        let interval = smart.interval.nanosecondsValue
        let idle = now &- smart.lastTraffic
        perform(.schedule(.heartbeat, after: .nanoseconds(Int64(clamping: idle >= interval ? 0 : interval - idle))))
    }

    mutating func heartbeatDue() {
        guard state.isConnected else { return }
        if let smart {
            if now &- smart.lastTraffic >= smart.interval.nanosecondsValue {
                if smart.probe == nil { smart.probe = smart.interval }
                sendHeartbeat()
                armAckTimer()
            }
        } else {
            sendHeartbeat()
            armAckTimer()
        }
        scheduleHeartbeat()
    }

    private mutating func armAckTimer() {
        guard let connection, !connection.awaitsAck else { return }
        modifyConnection { $0.awaitsAck = true }
        perform(.schedule(.acknowledgement, after: ackDeadline(awaitsGreetingReply: connection.awaitsGreetingReply)))
    }

    mutating func acknowledgementOverdue() {
        guard let connection, connection.awaitsAck else { return }
        modifyConnection { $0.awaitsAck = false }
        if let smart, let probe = smart.probe { report(smart.probeFailed(at: probe)) }
        drop(.heartbeatTimeout)
    }

    /// How long the server has to send something after a heartbeat: ``LongLinkClient/Configuration/heartbeatAckTimeout``
    /// (one interval by default), and at least ``LongLinkClient/Configuration/connectTimeout`` while the
    /// greeting is unanswered. A login can take the server seconds (a password hash, a queue of logins
    /// after a node died), and it answers the heartbeats behind it only after it: a client beating every
    /// 0.5 s dropped such logins one after another.
    private func ackDeadline(awaitsGreetingReply: Bool) -> Duration {
        let timeout =
            configuration.heartbeatAckTimeout ?? configuration.smartHeartbeat?.acknowledgementTimeout
            ?? configuration.heartbeatInterval
        guard awaitsGreetingReply else { return timeout }
        return max(timeout, .milliseconds(Int64(configuration.connectTimeout * 1000)))
    }

    private mutating func sendHeartbeat() {
        writeControl(codec.heartbeat)
        modifyConnection { $0.heartbeatsSent += 1 }
    }

    /// Stops every timer of a connection (the reconnect timer is not one).
    mutating func stopConnectionTimers() {
        for timer in [LinkTimer.retry, .heartbeat, .acknowledgement, .healthy, .drain] { perform(.cancel(timer)) }
    }

    /// Ends the connection on this side for `reason`; the disconnect that follows reports it.
    mutating func drop(_ reason: LongLinkClient<Codec>.DisconnectReason) {
        guard state.isConnected else { return }
        modifyConnection { $0.dropReason = reason }
        perform(.close(afterWriting: false))
    }

    // MARK: Reading

    /// One whole frame. Frames after this side decided to end the connection are not handled (the
    /// driver stops reading them: ``isDropping``).
    mutating func received(_ frame: Codec.Decoder.Frame) {
        guard let connection, connection.dropReason == nil else { return }
        let message: Codec.Message
        do {
            message = try codec.message(from: frame)
        } catch {
            drop(.protocolError("\(error)"))
            return
        }
        // The server is going away: the reconnect that follows is the schedule's first attempt.
        if codec.isGoingAway(message) { schedule.reset() }
        // Whatever arrives proves the link alive, as a read does for Netty's IdleStateHandler: a
        // server working through a backlog (a burst resent after a failover) answers a heartbeat only
        // after every message before it, and its replies to those come first.
        if connection.awaitsAck { perform(.cancel(.acknowledgement)) }
        modifyConnection {
            $0.awaitsAck = false
            $0.awaitsGreetingReply = false
        }
        if let smart {
            smart.lastTraffic = now
            if let answered = smart.probeAnswered() { report(answered, succeeded: true) }
        }
        if codec.isHeartbeatAck(message) {
            modifyConnection { $0.acksReceived += 1 }
            finishDrainIfDone()
        } else if let delivery {
            receivedReliably(message, delivery)
        } else {
            emit(.received(message))
        }
    }

    // MARK: Closing after sending

    /// Sends what is queued and a final heartbeat; closes when it is acknowledged or the drain times out.
    mutating func startDrain() {
        guard let connection, connection.drain == .none else { return }
        pumpOutbox()
        for message in takeQueued() { write(message) }
        sendHeartbeat()
        modifyConnection { $0.drain = .awaiting(target: $0.heartbeatsSent) }
        perform(.schedule(.drain, after: configuration.drainTimeout))
    }

    /// Closes after sending once the final heartbeat is acknowledged and, with reliable delivery, the
    /// outbox is empty (every message stored or refused).
    mutating func finishDrainIfDone() {
        guard let connection, case .awaiting(let target) = connection.drain, connection.acksReceived >= target,
            delivery?.outbox.isEmpty ?? true
        else { return }
        finishDrain()
    }

    /// Stops waiting; brings the store up to date (reliable delivery) and closes after writing.
    mutating func finishDrain() {
        perform(.cancel(.drain))
        guard let connection, connection.drain != .closing else { return }
        modifyConnection { $0.drain = .closing }
        guard delivery != nil else {
            closeAfterDrain()
            return
        }
        flushDelivery(then: .closeAfterDrain)
    }

    /// The drain's last step, once what it owes is persisted: close after writing.
    mutating func closeAfterDrain() {
        guard let connection, connection.drain == .closing, connection.dropReason == nil else { return }
        modifyConnection { $0.dropReason = .byUser }
        perform(.close(afterWriting: true))
    }
}
