import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketBench

/// `socket-bench client chat` load and crowd runs (``LoadOptions``), in four phases:
///
/// 1. the two probe users (if `--probe-rate`) log in and start exchanging direct messages;
/// 2. the users log in, at the login rate or all at once (logins/s, login latency, server RSS before/after);
/// 3. for the duration, direct messages and broadcasts at their rates from random logged-in users;
/// 4. the drain: until every expected delivery, `stored` answer and heartbeat answer is in, or the drain time.
///    It starts with a heartbeat from each logged-in connection that has sent none yet (a run shorter
///    than a heartbeat period, or logins that ended after their connection's slice came round), so a
///    clean run has checked every connection's heartbeat answer at least once.
///
/// Every delivery is checked off in a ``DeliveryLedger``. With `--failover` a user whose connection
/// drops logs in again on another server (``reconnectSchedule``, ``serverIndex(user:attempt:count:)``) and resends what was not stored;
/// the drain then also waits for every such user to be back.
/// All connections share one event-loop thread
/// (``Fleet``), where this object lives (hence the unchecked Sendable); ``run(_:)`` only waits between
/// phases, on semaphores the loop signals.
final class LoadRun: ChatConnectionHandler, @unchecked Sendable {
    /// How often the heartbeat ticker runs: every 100 ms it sends the heartbeats of one slice of the
    /// connections, so each connection's come one heartbeat period apart.
    static let heartbeatTick: UInt64 = 100_000_000
    /// `--failover`: the first attempt at once, then 2 s and 4 s (the articles' delays, as
    /// `im-client`), then doubling up to 30 s, forever; each plus up to 1 s of jitter, so the users of
    /// a node that died do not all knock on the next one in the same millisecond.
    static let reconnectSchedule: ReconnectSchedule = {
        var schedule = ReconnectSchedule()
        schedule.policy = .keepTrying(cap: .seconds(30))
        return schedule
    }()

    private let options: LoadOptions
    private let fleet: Fleet
    /// The users (0..<users), then the probes.
    private var connections: [ChatConnection] = []
    private var indexByName: [String: Int] = [:]
    private var ledger: DeliveryLedger
    private var result: LoadResult
    private var positions: [ConversationPositions]
    /// Users logged in, for picking senders and recipients, and where each is in that list.
    private var active: [Int] = []
    private var activeSlot: [Int: Int] = [:]
    private var probesLoggedIn = 0
    private var loginsEnded = 0
    private var firstConnect: UInt64 = 0, lastLogin: UInt64 = 0
    private var trafficStart: UInt64 = 0, lastDelivery: UInt64 = 0, lastBroadcastDelivery: UInt64 = 0
    private var directsDue = 0, broadcastsDue = 0, probesDue = 0, probeStart: UInt64 = 0
    private var isSending = false, isProbing = false, isDraining = false, isLoggingIn = false
    private var heartbeatTicks = 0
    /// Heartbeats sent by connections still open and not answered yet.
    private var heartbeatsOutstanding = 0
    /// Numbered (version 2) messages sent; the rest of the figures live in ``result`` and ``ledger``.
    private var numberedSent = 0
    private let spreads: Bool
    /// `--failover`: users away since a drop (when it was read), each one's schedule, and how many
    /// attempts each user made in all (its next server).
    private var droppedAt: [Int: UInt64] = [:]
    private var schedules: [Int: ReconnectSchedule] = [:]
    private var attemptsMade: [Int: Int] = [:]
    /// The result has been taken: nothing reconnects any more.
    private var isFinished = false

    private let probesReady = DispatchSemaphore(value: 0)
    private let loginsDone = DispatchSemaphore(value: 0)
    private let trafficDone = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)

    private init(options: LoadOptions, fleet: Fleet) {
        self.options = options
        self.fleet = fleet
        ledger = DeliveryLedger(receivers: options.connections)
        result = LoadResult(options: options)
        positions = Array(repeating: ConversationPositions(), count: options.connections)
        spreads = SourceAddresses.spreads(options)
    }

    private var login: ChatLogin {
        ChatLogin(version: options.version, password: options.stored ? RunTag.password : nil)
    }

    /// Runs `options`' load, blocking the calling thread until it ends (see the phases above).
    static func run(_ options: LoadOptions) -> LoadResult {
        let fleet = Fleet()
        let run = LoadRun(options: options, fleet: fleet)
        let tag = RunTag.make()
        let names = (1...options.users).map { "\(tag)u\($0)" } + (options.probeRate > 0 ? ["\(tag)p1", "\(tag)p2"] : [])
        run.connections = names.enumerated().map { index, name in
            let connection = ChatConnection(index: index, name: name, login: run.login, loop: fleet.loop, group: fleet.group, handler: run)
            connection.keepsOutbox = options.failover
            return connection
        }
        for (index, name) in names.enumerated() { run.indexByName[name] = index }
        let loginWait = DispatchTime.now() + options.loginTimeout

        if options.probeRate > 0 {
            fleet.loop.execute { run.connectProbes() }
            guard run.probesReady.wait(timeout: loginWait) == .success, run.fleet.loop.runAndWait({ run.probesLoggedIn == 2 }) else {
                Output.complain("the two probe users did not log in")
                return run.finish(cpuBefore: nil)
            }
            fleet.loop.execute { run.startProbes() }
        }
        let rssBefore = run.serverRSS()
        fleet.loop.execute { run.startLogins() }
        if run.loginsDone.wait(timeout: loginWait) == .timedOut {
            Output.complain("not every user logged in within \(Format.decimal(options.loginTimeout, 1)) s")
            fleet.loop.runAndWait { run.endLogins(timedOut: true) }
        }
        let rssAfter = run.serverRSS()
        fleet.loop.runAndWait {
            run.result.serverRSSBefore = rssBefore
            run.result.serverRSSAfterLogins = rssAfter
        }
        let cpuBefore = (own: ProcessTimes.ownCPUSeconds(), servers: run.serverCPU())
        fleet.loop.execute { run.startTraffic() }
        run.trafficDone.wait()
        _ = run.drained.wait(timeout: .now() + options.drain)
        return run.finish(cpuBefore: cpuBefore)
    }

    /// The result, with the CPU time since `cpuBefore` and the servers' RSS now; closes everything.
    private func finish(cpuBefore: (own: Double, servers: Double?)?) -> LoadResult {
        let ownCPU = ProcessTimes.ownCPUSeconds()
        let serversCPU = serverCPU()
        let rssEnd = serverRSS()
        var final = fleet.loop.runAndWait { [self] in makeResult() }
        fleet.shutDown(connections)
        if let cpuBefore {
            final.clientCPUSeconds = ownCPU - cpuBefore.own
            if let before = cpuBefore.servers, let after = serversCPU { final.serverCPUSeconds = after - before }
        }
        final.serverRSSEnd = rssEnd
        return final
    }

    /// The summed RSS of the server processes (KiB), nil without `--server-pid` or when one cannot be read.
    private func serverRSS() -> Int? {
        guard !options.serverPIDs.isEmpty else { return nil }
        let values = options.serverPIDs.compactMap(ProcessStatus.residentKilobytes(of:))
        return values.count == options.serverPIDs.count ? values.reduce(0, +) : nil
    }

    /// The summed CPU seconds of the server processes, nil without `--server-pid` or when one cannot be read.
    private func serverCPU() -> Double? {
        guard !options.serverPIDs.isEmpty else { return nil }
        let values = options.serverPIDs.compactMap(ProcessTimes.cpuSeconds(of:))
        return values.count == options.serverPIDs.count ? values.reduce(0, +) : nil
    }

    // MARK: - Phases (loop thread)

    /// User `index`'s server for its next attempt (``LoadOptions/failover``): first `index mod n`, then
    /// from its `q = index / n`, attempt k ≥ 1 goes `1 + (q + k − 1) mod n` servers further on. So the
    /// users of a node that died spread over all the others at their first retry (as clients that
    /// shuffle their server list do) instead of all moving to the next one: at 100,000 users on six
    /// nodes of at most 20,000 connections each, the next node filled up and turned the rest away.
    static func serverIndex(user index: Int, attempt: Int, count: Int) -> Int {
        let offset = attempt == 0 ? 0 : 1 + (index / count + attempt - 1) % count
        return (index + offset) % count
    }

    private func server(of index: Int) -> ServerAddress {
        options.servers[Self.serverIndex(user: index, attempt: attemptsMade[index, default: 0], count: options.servers.count)]
    }

    private func connect(_ index: Int) {
        let connection = connections[index]
        do {
            try connection.connect(to: server(of: index), from: spreads ? SourceAddresses.address(of: index) : nil)
        } catch {
            connectionFailed(connection, "\(connection.name): cannot connect to \(server(of: index)): \(error)")
        }
    }

    private func connectProbes() {
        connect(options.users)
        connect(options.users + 1)
        startHeartbeats()
    }

    private func startLogins() {
        isLoggingIn = true
        firstConnect = MonotonicClock.now()
        if probesLoggedIn == 0 { startHeartbeats() }
        connectDueUsers()
    }

    /// Connects the users due by now (all at once when the login rate is 0) and sleeps until the next is due.
    private func connectDueUsers() {
        var next = loginsStarted
        let now = MonotonicClock.now()
        while next < options.users, options.loginRate == 0 || now >= firstConnect + UInt64(Double(next) * 1e9 / options.loginRate) {
            connect(next)
            next += 1
        }
        loginsStarted = next
        guard next < options.users, isLoggingIn else { return }
        let due = firstConnect + UInt64(Double(next) * 1e9 / options.loginRate)
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(due > now ? due - now : 0))) { [self] in connectDueUsers() }
    }
    private var loginsStarted = 0

    private func endLogins(timedOut: Bool) {
        guard isLoggingIn else { return }
        isLoggingIn = false
        result.loginTimedOut = timedOut
        result.loginSeconds = Double((lastLogin > firstConnect ? lastLogin : firstConnect) - firstConnect) / 1e9
        if !timedOut { loginsDone.signal() }
    }

    private func startTraffic() {
        // On standard error, so a script can act on it (bench-cluster.sh kills a node some time after).
        Output.complain("\(options.label.isEmpty ? "" : options.label + ": ")messages start, \(active.count) users logged in")
        trafficStart = MonotonicClock.now()
        isSending = true
        sendDue()
    }

    /// Sends every direct message and broadcast due by now, then sleeps until the next one or the end.
    private func sendDue() {
        guard isSending else { return }
        let now = MonotonicClock.now()
        let end = trafficStart + UInt64(options.duration * 1e9)
        let elapsed = Double(min(now, end) - trafficStart) / 1e9
        let directs = options.directRate > 0 ? Int(elapsed * options.directRate) + (now < end ? 1 : 0) : 0
        let broadcasts = options.broadcastRate > 0 ? Int(elapsed * options.broadcastRate) + (now < end ? 1 : 0) : 0
        let duration = options.duration
        while directsDue < min(directs, Int((duration * options.directRate).rounded(.up))) {
            directsDue += 1
            sendDirect(at: now)
        }
        while broadcastsDue < min(broadcasts, Int((duration * options.broadcastRate).rounded(.up))) {
            broadcastsDue += 1
            sendBroadcast(at: now)
        }
        guard now < end else {
            isSending = false
            isProbing = false
            isDraining = true
            heartbeatThoseThatHaveNot()
            trafficDone.signal()
            checkDrained()
            return
        }
        var next = end
        if options.directRate > 0 { next = min(next, trafficStart + UInt64(Double(directsDue) * 1e9 / options.directRate)) }
        if options.broadcastRate > 0 { next = min(next, trafficStart + UInt64(Double(broadcastsDue) * 1e9 / options.broadcastRate)) }
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(next > now ? next - now : 0))) { [self] in sendDue() }
    }

    private func text(_ id: UInt64) -> String { MessageText.make(id: id, bytes: options.textBytes) }

    private func sendDirect(at now: UInt64) {
        guard active.count >= 2 else { return }
        let sender = active[Int.random(in: 0..<active.count)]
        var recipient = active[Int.random(in: 0..<active.count - 1)]
        if recipient == sender { recipient = active[active.count - 1] }
        let id = ledger.send(.direct, from: sender, to: recipient, expecting: 1, at: now)
        result.sentDirect += 1
        connections[sender].sendDirect(id: id, to: connections[recipient].name, text: text(id))
        if options.version == .v2 { numberedSent += 1 }
    }

    private func sendBroadcast(at now: UInt64) {
        guard !active.isEmpty else { return }
        let sender = active[Int.random(in: 0..<active.count)]
        let id = ledger.send(.broadcast, from: sender, to: nil, expecting: active.count - 1 + probesLoggedIn, at: now)
        result.sentBroadcast += 1
        connections[sender].sendBroadcast(id: id, text: text(id))
        if options.version == .v2 { numberedSent += 1 }
    }

    private func startProbes() {
        probeStart = MonotonicClock.now()
        isProbing = true
        sendProbes()
    }

    /// The probes' messages due by now, alternately from each to the other.
    private func sendProbes() {
        guard isProbing else { return }
        let now = MonotonicClock.now()
        let due = Int(Double(now - probeStart) * options.probeRate / 1e9) + 1
        while probesDue < due {
            let sender = options.users + probesDue % 2, recipient = options.users + 1 - probesDue % 2
            probesDue += 1
            guard connections[sender].isLoggedIn, connections[recipient].isLoggedIn else { continue }
            let id = ledger.send(.probe, from: sender, to: recipient, expecting: 1, at: now)
            result.sentProbe += 1
            result.probeExpected += 1
            connections[sender].sendDirect(id: id, to: connections[recipient].name, text: text(id))
            if options.version == .v2 { numberedSent += 1 }
        }
        let next = probeStart + UInt64(Double(probesDue) * 1e9 / options.probeRate)
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(next > now ? next - now : 0))) { [self] in sendProbes() }
    }

    private func startHeartbeats() {
        guard options.heartbeat > 0 else { return }
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(LoadRun.heartbeatTick))) { [self] in heartbeatTick() }
    }

    /// Every tick one slice of the connections (index ≡ tick mod slices) heartbeats; one still waiting
    /// for the answer to its previous heartbeat is late (``ChatConnection/heartbeatsLate``).
    private func heartbeatTick() {
        guard !isDraining else { return }
        let slices = max(1, Int((options.heartbeat * 1e9 / Double(LoadRun.heartbeatTick)).rounded()))
        let slice = heartbeatTicks % slices
        heartbeatTicks += 1
        for index in stride(from: slice, to: connections.count, by: slices) where connections[index].isLoggedIn {
            heartbeat(connections[index])
        }
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(LoadRun.heartbeatTick))) { [self] in heartbeatTick() }
    }

    /// A heartbeat from each logged-in connection that has sent none on its current connection, as the
    /// drain begins (step 4 above); none when heartbeats are off.
    private func heartbeatThoseThatHaveNot() {
        guard options.heartbeat > 0 else { return }
        for connection in connections where connection.isLoggedIn && connection.heartbeatsSent == 0 { heartbeat(connection) }
    }

    /// One heartbeat from `connection`, counted outstanding until its answer.
    private func heartbeat(_ connection: ChatConnection) {
        connection.sendHeartbeat()
        heartbeatsOutstanding += 1
    }

    /// Outstanding: deliveries, `stored` answers, heartbeat answers.
    private var isComplete: Bool {
        ledger.missing == 0 && (options.version == .v1 || ledger.acknowledged + ledger.refused >= numberedSent)
            && heartbeatsOutstanding == 0 && droppedAt.isEmpty
    }

    /// Signals ``drained`` once everything outstanding has come. Draining goes on until the result is
    /// taken: it used to end here, which let the heartbeat ticks start again, and a heartbeat sent
    /// between this signal and ``makeResult()`` (a loaded machine) was counted as missed.
    private func checkDrained() {
        guard isDraining, !drainedSignalled, isComplete else { return }
        drainedSignalled = true
        drained.signal()
    }
    private var drainedSignalled = false

    /// Lines for the first `limit` messages whose deliveries are not all in (``LoadResult/undelivered``).
    private func undeliveredMessages(limit: Int) -> [String] {
        var lines: [String] = []
        for (offset, sent) in ledger.messages.enumerated() where sent.delivered < sent.expected && lines.count < limit {
            let sender = connections[Int(sent.sender)].name
            var line = "#\(offset + 1) \(sender) → "
            if sent.recipient >= 0 {
                let recipient = connections[Int(sent.recipient)].name
                let conversation = ConversationID(between: sender, and: recipient).description
                line += "\(recipient) (\(conversation), recipient at \(positions[Int(sent.recipient)].positions[conversation] ?? 0))"
            } else {
                line += "room"
            }
            line += " \(sent.delivered)/\(sent.expected) delivered, \(sent.isAcknowledged ? "acknowledged" : "not acknowledged")"
            lines.append(line)
        }
        return lines
    }

    private func makeResult() -> LoadResult {
        isFinished = true
        var result = self.result
        result.usersAway = droppedAt.count
        result.heartbeatsLost = connections.reduce(0) { $0 + $1.heartbeatsLost }
        result.messagesResent = connections.reduce(0) { $0 + $1.messagesResent }
        result.storeRefusals = connections.reduce(0) { $0 + $1.storeRefusals }
        result.loggedIn = loggedInOnce.filter { $0 < options.users }.count
        result.probeDelivered = ledger.messages.reduce(0) { $0 + ($1.kind == .probe ? Int($1.delivered) : 0) }
        result.expected = ledger.expected
        result.delivered = ledger.delivered
        result.duplicates = ledger.duplicates
        result.outOfOrder = ledger.outOfOrder
        result.misdelivered = ledger.misdelivered
        result.unknownIDs = ledger.unknown
        result.refused = ledger.refused
        result.echoes = ledger.echoes
        result.undelivered = undeliveredMessages(limit: 10)
        result.acknowledged = ledger.acknowledged
        result.acknowledgementErrors = ledger.acknowledgementErrors
        result.unacknowledged = options.version == .v2 ? max(0, numberedSent - ledger.acknowledged - ledger.refused) : 0
        result.heartbeatsSent = connections.reduce(0) { $0 + $1.heartbeatsSent }
        result.heartbeatsAnswered = connections.reduce(0) { $0 + $1.heartbeatsAnswered }
        // On connections still up, late and unanswered ones count as missed too; those of a connection
        // that dropped were lost with it (ChatConnection.heartbeatsLost).
        result.heartbeatsMissed = connections.reduce(0) {
            $0 + $1.heartbeatsMissed + ($1.isLoggedIn ? $1.heartbeatsLate + $1.heartbeatsSent - $1.heartbeatsAnswered : 0)
        }
        if lastDelivery > trafficStart, trafficStart > 0 { result.deliverySeconds = Double(lastDelivery - trafficStart) / 1e9 }
        if lastBroadcastDelivery > trafficStart, trafficStart > 0 {
            result.broadcastSeconds = Double(lastBroadcastDelivery - trafficStart) / 1e9
        }
        result.drained = isComplete
        return result
    }
    /// Users whose login was accepted at some time.
    private var loggedInOnce: Set<Int> = []

    private func connectionFailed(_ connection: ChatConnection, _ reason: String) {
        if options.failover, loggedInOnce.contains(connection.index), !isFinished {
            dropped(connection, reason)
            return
        }
        result.connectionFailures += 1
        if result.failureReasons.count < 10 { result.failureReasons.append(reason) }
        if result.connectionFailures <= 3 { Output.complain(reason) }
        let index = connection.index
        if index < options.users {
            if activeSlot[index] != nil {
                deactivate(index)
            } else if !loggedInOnce.contains(index) {
                result.loginFailures += 1
                userLoginEnded()
            }
        } else if !loggedInOnce.contains(index) {
            probesReady.signal()
        }
        if connection.isLoggedIn || loggedInOnce.contains(index) {
            heartbeatsOutstanding -= connection.heartbeatsSent - connection.heartbeatsAnswered
        }
        checkDrained()
    }

    /// `--failover`: `connection` (logged in before) dropped, or an attempt to log it in again failed.
    /// It leaves the senders and recipients until it is back, and tries again on the schedule.
    private func dropped(_ connection: ChatConnection, _ reason: String) {
        let index = connection.index
        heartbeatsOutstanding -= connection.heartbeatsSent - connection.heartbeatsAnswered
        if droppedAt[index] == nil {
            droppedAt[index] = MonotonicClock.now()
            result.drops += 1
            if result.drops <= 3 { Output.complain("\(reason); logging in again on the next server") }
            deactivate(index)
        } else {
            result.failedAttempts += 1
            if result.failedAttemptReasons.count < 5 {
                result.failedAttemptReasons.append(reason)
                Output.complain("\(reason); trying the next server")
            }
        }
        var schedule = schedules[index] ?? LoadRun.reconnectSchedule
        let delay = schedule.next()?.delay ?? .seconds(30)  // keepTrying: never nil
        schedules[index] = schedule
        _ = fleet.loop.scheduleTask(in: delay) { [self] in
            guard !isFinished, droppedAt[index] != nil else { return }
            attemptsMade[index, default: 0] += 1
            result.reconnectAttempts += 1
            do {
                try connection.reconnect(
                    to: server(of: index), from: spreads ? SourceAddresses.address(of: index) : nil,
                    positions: positions[index].positions, loginTimeout: .seconds(options.loginTimeout))
            } catch {
                dropped(connection, "\(connection.name): cannot connect to \(server(of: index)): \(error)")
            }
        }
        checkDrained()
    }

    /// Takes user `index` out of the senders and recipients.
    private func deactivate(_ index: Int) {
        guard let slot = activeSlot.removeValue(forKey: index) else { return }
        let moved = active.removeLast()
        if slot < active.count {
            active[slot] = moved
            activeSlot[moved] = slot
        }
    }

    private func userLoginEnded() {
        loginsEnded += 1
        if loginsEnded == options.users { endLogins(timedOut: false) }
    }

    // MARK: - ChatConnectionHandler (loop thread)

    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64) {
        let index = connection.index
        if let since = droppedAt.removeValue(forKey: index) {
            // Back after a drop (--failover), on another server.
            result.failoverLatency.record(now &- since)
            schedules[index] = nil
            if index < options.users {
                activeSlot[index] = active.count
                active.append(index)
            }
            checkDrained()
            return
        }
        if index >= options.users {
            loggedInOnce.insert(index)
            probesLoggedIn += 1
            if probesLoggedIn == 2 { probesReady.signal() }
            return
        }
        guard isLoggingIn else {
            // Too late: the run has moved on without it.
            result.unexpected += 1
            connection.close()
            return
        }
        loggedInOnce.insert(index)
        result.loginLatency.record(now &- connection.connectStart)
        activeSlot[index] = active.count
        active.append(index)
        lastLogin = now
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
                    result.resentDeliveries += 1
                    return
                case .gap(let missing): result.gaps += missing
                }
            }
            guard let sender = indexByName[from] else {
                result.foreign += 1
                return
            }
            guard let id = MessageText.id(in: text) else {
                result.unexpected += 1
                return
            }
            switch ledger.arrive(id, from: sender, to: receiver, isDirect: isDirect, at: now) {
            case .delivered(let kind, let latency):
                switch kind {
                case .probe:
                    result.probeLatency.record(latency)
                case .direct:
                    result.directLatency.record(latency)
                    result.deliveryLatency.record(latency)
                    lastDelivery = now
                case .broadcast:
                    result.broadcastLatency.record(latency)
                    result.deliveryLatency.record(latency)
                    lastDelivery = now
                    lastBroadcastDelivery = now
                }
                checkDrained()
            case .echo, .duplicate, .outOfOrder, .misdelivered, .unknown:
                break
            }
        case .stored(let id, _):
            ledger.acknowledge(id)
            checkDrained()
        case .receipt:
            result.receipts += 1
        case .heartbeatAck:
            heartbeatsOutstanding -= 1
            checkDrained()
        case .error(let code, let detail, let id):
            result.errors[code, default: 0] += 1
            if let id { ledger.refuse(id) }
            if result.errorCount <= 3 {
                Output.complain("\(connection.name): server error \(code)\(id.map { " for #\($0)" } ?? ""): \(detail)")
            }
            checkDrained()
        case .ignored:
            result.ignoredFrames += 1
        }
    }
}
