import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketBench

/// What the connections report, on the loop thread: logins, failures and drops, server events.
extension LoadRun {
    // MARK: - Failures and drops (loop thread)

    func connectionFailed(_ connection: ChatConnection, _ reason: String) {
        if options.failover, failover.loggedInOnce.contains(connection.index), !phase.isFinished {
            dropped(connection, reason)
            return
        }
        result.failures.connectionFailures += 1
        if result.failures.failureReasons.count < 10 { result.failures.failureReasons.append(reason) }
        if result.failures.connectionFailures <= 3 { Output.complain(reason) }
        let index = connection.index
        if index < options.users {
            if roster.activeSlot[index] != nil {
                deactivate(index)
            } else if !failover.loggedInOnce.contains(index) {
                result.logins.loginFailures += 1
                userLoginEnded()
            }
        } else if !failover.loggedInOnce.contains(index) {
            signals.probesReady.signal()
        }
        if connection.isLoggedIn || failover.loggedInOnce.contains(index) {
            counts.heartbeatsOutstanding -= connection.heartbeatsSent - connection.heartbeatsAnswered
        }
        checkDrained()
    }

    /// `--failover`: `connection` (logged in before) dropped, or an attempt to log it in again failed.
    /// It leaves the senders and recipients until it is back, and tries again on the schedule.
    func dropped(_ connection: ChatConnection, _ reason: String) {
        let index = connection.index
        counts.heartbeatsOutstanding -= connection.heartbeatsSent - connection.heartbeatsAnswered
        if failover.droppedAt[index] == nil {
            failover.droppedAt[index] = MonotonicClock.now()
            result.failover.drops += 1
            if result.failover.drops <= 3 { Output.complain("\(reason); logging in again on the next server") }
            deactivate(index)
        } else {
            result.failover.failedAttempts += 1
            if result.failover.failedAttemptReasons.count < 5 {
                result.failover.failedAttemptReasons.append(reason)
                Output.complain("\(reason); trying the next server")
            }
        }
        var schedule = failover.schedules[index] ?? LoadRun.reconnectSchedule
        var delay = schedule.next()?.delay ?? .seconds(30)  // keepTrying: never nil
        failover.schedules[index] = schedule
        if let retryAfter = connection.takeBusyRetryAfter() {
            // serverBusy: not before its retryAfter, plus jitter so the crowd does not come back at once.
            result.failover.busyRefusals += 1
            delay = max(delay, .seconds(Int64(clamping: retryAfter)) + .milliseconds(Int.random(in: 0..<1_000)))
        }
        _ = fleet.loop.scheduleTask(in: delay) { [self] in
            guard !phase.isFinished, failover.droppedAt[index] != nil else { return }
            failover.attemptsMade[index, default: 0] += 1
            result.failover.reconnectAttempts += 1
            do {
                try connection.reconnect(
                    to: server(of: index), from: spreads ? SourceAddresses.address(of: index) : nil,
                    positions: positions[index].positions, loginTimeout: .seconds(options.timing.loginTimeout))
            } catch {
                dropped(connection, "\(connection.name): cannot connect to \(server(of: index)): \(error)")
            }
        }
        checkDrained()
    }

    /// Takes user `index` out of the senders and recipients.
    func deactivate(_ index: Int) {
        guard let slot = roster.activeSlot.removeValue(forKey: index) else { return }
        let moved = roster.active.removeLast()
        if slot < roster.active.count {
            roster.active[slot] = moved
            roster.activeSlot[moved] = slot
        }
    }

    func userLoginEnded() {
        counts.loginsEnded += 1
        if counts.loginsEnded == options.users { endLogins(timedOut: false) }
    }

    // MARK: - ChatConnectionHandler (loop thread)

    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64) {
        let index = connection.index
        if let since = failover.droppedAt.removeValue(forKey: index) {
            // Back after a drop (--failover), on another server.
            result.failover.failoverLatency.record(now &- since)
            failover.schedules[index] = nil
            if index < options.users {
                roster.activeSlot[index] = roster.active.count
                roster.active.append(index)
            }
            checkDrained()
            return
        }
        if index >= options.users {
            failover.loggedInOnce.insert(index)
            counts.probesLoggedIn += 1
            if counts.probesLoggedIn == 2 { signals.probesReady.signal() }
            return
        }
        guard phase.isLoggingIn else {
            // Too late: the run has moved on without it.
            result.answers.unexpected += 1
            connection.close()
            return
        }
        failover.loggedInOnce.insert(index)
        result.logins.loginLatency.record(now &- connection.connectStart)
        roster.activeSlot[index] = roster.active.count
        roster.active.append(index)
        times.lastLogin = now
        userLoginEnded()
    }

    func connection(_ connection: ChatConnection, didFail reason: String) { connectionFailed(connection, reason) }

    func connection(_ connection: ChatConnection, didReceive event: ServerEvent, at now: UInt64) {
        let receiver = connection.index
        switch event {
        case .delivery(let from, let text, let isDirect, let conversation, let sequence):
            if let conversation, let sequence {
                if conversation == "room" { positions[receiver].startIfNew(conversation, at: sequence) }
                let arrival = positions[receiver].arrive(conversation, sequence: sequence)
                connection.acknowledge(conversation, upTo: sequence)
                switch arrival {
                case .next: break
                case .duplicate:
                    // Read before (the server resends from the position after a reconnect): a client
                    // does not show it again, so neither does the ledger count it.
                    result.deliveries.resentDeliveries += 1
                    return
                case .gap(let missing): result.deliveries.gaps += missing
                }
            }
            guard let sender = roster.indexByName[from] else {
                result.deliveries.foreign += 1
                return
            }
            guard let id = MessageText.id(in: text) else {
                result.answers.unexpected += 1
                return
            }
            switch ledger.arrive(id, from: sender, to: receiver, isDirect: isDirect, at: now) {
            case .delivered(let kind, let latency):
                switch kind {
                case .probe:
                    result.latencies.probeLatency.record(latency)
                case .direct:
                    result.latencies.directLatency.record(latency)
                    result.latencies.deliveryLatency.record(latency)
                    times.lastDelivery = now
                case .broadcast:
                    result.latencies.broadcastLatency.record(latency)
                    result.latencies.deliveryLatency.record(latency)
                    times.lastDelivery = now
                    times.lastBroadcastDelivery = now
                }
                checkDrained()
            case .echo, .duplicate, .outOfOrder, .misdelivered, .unknown:
                break
            }
        case .stored(let id, _):
            ledger.acknowledge(id)
            checkDrained()
        case .receipt:
            result.answers.receipts += 1
        case .heartbeatAck:
            counts.heartbeatsOutstanding -= 1
            checkDrained()
        case .error(let code, let detail, let id):
            result.answers.errors[code, default: 0] += 1
            if let id { ledger.refuse(id) }
            if result.errorCount <= 3 {
                Output.complain("\(connection.name): server error \(code)\(id.map { " for #\($0)" } ?? ""): \(detail)")
            }
            checkDrained()
        case .ignored:
            result.answers.ignoredFrames += 1
        }
    }
}
