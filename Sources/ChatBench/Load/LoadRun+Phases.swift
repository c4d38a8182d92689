import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketBench

/// The phases of a run, on the loop thread: logins, traffic, probes, heartbeats, the drain.
extension LoadRun {
    // MARK: - Phases (loop thread)

    /// User `index`'s server for its next attempt (``LoadOptions/failover``): first `index mod n`; then
    /// rounds of n attempts, each over the n − 1 other servers, starting `1 + q mod (n − 1)` servers on
    /// (`q = index / n`), and its own server last. So the users of a node that died spread over all
    /// the others at their first retry (as clients that shuffle their server list do) instead of all
    /// moving to the next one (at 100,000 users on six nodes of at most 20,000 connections each, the
    /// next node filled up and turned the rest away), and none goes back first to the server that
    /// just dropped it (1 in n did, and waited for its second attempt, 2 s later).
    static func serverIndex(user index: Int, attempt: Int, count: Int) -> Int {
        let step = (attempt - 1) % count
        guard attempt > 0, count > 1, step < count - 1 else { return index % count }
        return (index + 1 + (index / count + step) % (count - 1)) % count
    }

    func server(of index: Int) -> ServerAddress {
        options.servers[Self.serverIndex(user: index, attempt: failover.attemptsMade[index, default: 0], count: options.servers.count)]
    }

    func connect(_ index: Int) {
        let connection = roster.connections[index]
        do {
            try connection.connect(to: server(of: index), from: spreads ? SourceAddresses.address(of: index) : nil)
        } catch {
            connectionFailed(connection, "\(connection.name): cannot connect to \(server(of: index)): \(error)")
        }
    }

    func connectProbes() {
        connect(options.users)
        connect(options.users + 1)
        startHeartbeats()
    }

    func startLogins() {
        phase.isLoggingIn = true
        times.firstConnect = MonotonicClock.now()
        if counts.probesLoggedIn == 0 { startHeartbeats() }
        connectDueUsers()
    }

    /// Connects the users due by now (all at once when the login rate is 0) and sleeps until the next is due.
    func connectDueUsers() {
        var next = counts.loginsStarted
        let now = MonotonicClock.now()
        while next < options.users,
            options.rates.loginRate == 0 || now >= times.firstConnect + UInt64(Double(next) * 1e9 / options.rates.loginRate)
        {
            connect(next)
            next += 1
        }
        counts.loginsStarted = next
        guard next < options.users, phase.isLoggingIn else { return }
        let due = times.firstConnect + UInt64(Double(next) * 1e9 / options.rates.loginRate)
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(due > now ? due - now : 0))) { [self] in connectDueUsers() }
    }

    func endLogins(timedOut: Bool) {
        guard phase.isLoggingIn else { return }
        phase.isLoggingIn = false
        result.logins.loginTimedOut = timedOut
        result.logins.loginSeconds =
            Double((times.lastLogin > times.firstConnect ? times.lastLogin : times.firstConnect) - times.firstConnect) / 1e9
        if !timedOut { signals.loginsDone.signal() }
    }

    func startTraffic() {
        // On standard error, so a script can act on it (bench-cluster.sh kills a node some time after).
        Output.complain("\(options.label.isEmpty ? "" : options.label + ": ")messages start, \(roster.active.count) users logged in")
        times.trafficStart = MonotonicClock.now()
        phase.isSending = true
        sendDue()
    }

    /// Sends every direct message and broadcast due by now, then sleeps until the next one or the end.
    func sendDue() {
        guard phase.isSending else { return }
        let now = MonotonicClock.now()
        let end = times.trafficStart + UInt64(options.timing.duration * 1e9)
        let elapsed = Double(min(now, end) - times.trafficStart) / 1e9
        let directs = options.rates.directRate > 0 ? Int(elapsed * options.rates.directRate) + (now < end ? 1 : 0) : 0
        let broadcasts = options.rates.broadcastRate > 0 ? Int(elapsed * options.rates.broadcastRate) + (now < end ? 1 : 0) : 0
        let duration = options.timing.duration
        while counts.directsDue < min(directs, Int((duration * options.rates.directRate).rounded(.up))) {
            counts.directsDue += 1
            sendDirect(at: now)
        }
        while counts.broadcastsDue < min(broadcasts, Int((duration * options.rates.broadcastRate).rounded(.up))) {
            counts.broadcastsDue += 1
            sendBroadcast(at: now)
        }
        guard now < end else {
            phase.isSending = false
            phase.isProbing = false
            phase.isDraining = true
            heartbeatThoseThatHaveNot()
            signals.trafficDone.signal()
            checkDrained()
            return
        }
        var next = end
        if options.rates.directRate > 0 {
            next = min(next, times.trafficStart + UInt64(Double(counts.directsDue) * 1e9 / options.rates.directRate))
        }
        if options.rates.broadcastRate > 0 {
            next = min(next, times.trafficStart + UInt64(Double(counts.broadcastsDue) * 1e9 / options.rates.broadcastRate))
        }
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(next > now ? next - now : 0))) { [self] in sendDue() }
    }

    func text(_ id: UInt64) -> String { MessageText.make(id: id, bytes: options.textBytes) }

    func sendDirect(at now: UInt64) {
        guard roster.active.count >= 2 else { return }
        let sender = roster.active[Int.random(in: 0..<roster.active.count)]
        var recipient = roster.active[Int.random(in: 0..<roster.active.count - 1)]
        if recipient == sender { recipient = roster.active[roster.active.count - 1] }
        let id = ledger.send(.direct, from: sender, to: recipient, expecting: 1, at: now)
        result.traffic.sentDirect += 1
        roster.connections[sender].sendDirect(id: id, to: roster.connections[recipient].name, text: text(id))
        if options.version == .v2 { counts.numberedSent += 1 }
    }

    func sendBroadcast(at now: UInt64) {
        guard !roster.active.isEmpty else { return }
        let sender = roster.active[Int.random(in: 0..<roster.active.count)]
        let id = ledger.send(.broadcast, from: sender, to: nil, expecting: roster.active.count - 1 + counts.probesLoggedIn, at: now)
        result.traffic.sentBroadcast += 1
        roster.connections[sender].sendBroadcast(id: id, text: text(id))
        if options.version == .v2 { counts.numberedSent += 1 }
    }

    func startProbes() {
        times.probeStart = MonotonicClock.now()
        phase.isProbing = true
        sendProbes()
    }

    /// The probes' messages due by now, alternately from each to the other.
    func sendProbes() {
        guard phase.isProbing else { return }
        let now = MonotonicClock.now()
        let due = Int(Double(now - times.probeStart) * options.rates.probeRate / 1e9) + 1
        while counts.probesDue < due {
            let sender = options.users + counts.probesDue % 2, recipient = options.users + 1 - counts.probesDue % 2
            counts.probesDue += 1
            guard roster.connections[sender].isLoggedIn, roster.connections[recipient].isLoggedIn else { continue }
            let id = ledger.send(.probe, from: sender, to: recipient, expecting: 1, at: now)
            result.traffic.sentProbe += 1
            result.traffic.probeExpected += 1
            roster.connections[sender].sendDirect(id: id, to: roster.connections[recipient].name, text: text(id))
            if options.version == .v2 { counts.numberedSent += 1 }
        }
        let next = times.probeStart + UInt64(Double(counts.probesDue) * 1e9 / options.rates.probeRate)
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(next > now ? next - now : 0))) { [self] in sendProbes() }
    }

    func startHeartbeats() {
        guard options.timing.heartbeat > 0 else { return }
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(LoadRun.heartbeatTick))) { [self] in heartbeatTick() }
    }

    /// Every tick one slice of the connections (index ≡ tick mod slices) heartbeats; one still waiting
    /// for the answer to its previous heartbeat is late (``ChatConnection/heartbeatsLate``).
    func heartbeatTick() {
        guard !phase.isDraining else { return }
        let slices = max(1, Int((options.timing.heartbeat * 1e9 / Double(LoadRun.heartbeatTick)).rounded()))
        let slice = counts.heartbeatTicks % slices
        counts.heartbeatTicks += 1
        for index in stride(from: slice, to: roster.connections.count, by: slices) where roster.connections[index].isLoggedIn {
            heartbeat(roster.connections[index])
        }
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(LoadRun.heartbeatTick))) { [self] in heartbeatTick() }
    }

    /// A heartbeat from each logged-in connection that has sent none on its current connection, as the
    /// drain begins (step 4 above); none when heartbeats are off.
    func heartbeatThoseThatHaveNot() {
        guard options.timing.heartbeat > 0 else { return }
        for connection in roster.connections where connection.isLoggedIn && connection.heartbeatsSent == 0 { heartbeat(connection) }
    }

    /// One heartbeat from `connection`, counted outstanding until its answer.
    func heartbeat(_ connection: ChatConnection) {
        connection.sendHeartbeat()
        counts.heartbeatsOutstanding += 1
    }

    /// Outstanding: deliveries, `stored` answers, heartbeat answers.
    var isComplete: Bool {
        ledger.missing == 0 && (options.version == .v1 || ledger.acknowledged + ledger.refused >= counts.numberedSent)
            && counts.heartbeatsOutstanding == 0 && failover.droppedAt.isEmpty
    }

    /// Signals ``drained`` once everything outstanding has come. Draining goes on until the result is
    /// taken: it used to end here, which let the heartbeat ticks start again, and a heartbeat sent
    /// between this signal and ``makeResult()`` (a loaded machine) was counted as missed.
    func checkDrained() {
        guard phase.isDraining, !phase.drainedSignalled, isComplete else { return }
        phase.drainedSignalled = true
        signals.drained.signal()
    }
}
