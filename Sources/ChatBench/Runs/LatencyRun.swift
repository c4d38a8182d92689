import SocketBench
import AsyncSocket
import ChatProtocol
import Foundation

/// `chat-bench latency`: one sender sends numbered direct messages to one receiver at a steady rate,
/// message i (from 0) due i / rate seconds after the start, and every message's times are taken from
/// the moment it is written to the socket: to the receiver reading its delivery, and to the sender
/// reading its `stored`.
///
/// ```
/// sender ── #1 at 0 ms, #2 at 1 ms, … ──▶ im-server ──▶ delivery ──▶ receiver   (send → delivery)
///        ◀──────────── stored #id ───────────┘                                  (send → stored)
/// ```
///
/// Sender and receiver share one event-loop thread and one clock, where this object lives (hence the
/// unchecked Sendable): ``run(_:)`` only waits.
final class LatencyRun: ChatConnectionHandler, @unchecked Sendable {
    private let options: LatencyOptions
    private let fleet: Fleet
    private let codec = ChatCodec(version: .v2)
    /// The sender (index 0) and the receiver (index 1).
    private var connections: [ChatConnection] = []
    private var senderName = "", receiverName = ""
    private var sendTimes: [UInt64] = []
    /// Which ids were acknowledged, delivered to the receiver, and echoed to the sender.
    private var ledgers: Ledgers
    private var positions = [ConversationPositions(), ConversationPositions()]
    private var latencies = Latencies()
    private var tally = Tally()
    private var progress = Progress()

    /// Which ids were acknowledged, delivered to the receiver, and echoed to the sender.
    private struct Ledgers {
        var stored: MessageLedger
        var delivered: MessageLedger
        var echoes: MessageLedger

        init(count: Int) {
            stored = MessageLedger(count: count)
            delivered = MessageLedger(count: count)
            echoes = MessageLedger(count: count)
        }
    }

    /// The latencies measured (ns), and the most a send was behind its schedule.
    private struct Latencies {
        var deliveryLatencies: [UInt64] = []
        var storedLatencies: [UInt64] = []
        var maxLateness: UInt64 = 0
    }

    /// What else arrived: deliveries again, gaps, receipts, errors, anything unexpected.
    private struct Tally {
        var resentDeliveries = 0, gaps: UInt64 = 0, receipts = 0, serverErrors = 0, unexpected = 0
    }

    /// How far the sending is: the schedule's start, the last send, how many were sent, the end.
    private struct Progress {
        var start: UInt64 = 0, lastSend: UInt64 = 0
        var sentCount = 0
        var isFinished = false
    }

    private init(options: LatencyOptions, fleet: Fleet) {
        self.options = options
        self.fleet = fleet
        ledgers = Ledgers(count: options.total)
        sendTimes = [UInt64](repeating: 0, count: options.total)
        latencies.deliveryLatencies.reserveCapacity(options.total)
        latencies.storedLatencies.reserveCapacity(options.total)
    }

    /// Runs `options`' load, blocking the calling thread until every message is acknowledged and
    /// delivered, or a connection fails, or nothing has moved for ``LatencyOptions/drain``.
    static func run(_ options: LatencyOptions) -> LatencyResult {
        let fleet = Fleet()
        let run = LatencyRun(options: options, fleet: fleet)
        let tag = RunTag.make()
        run.senderName = "\(tag)s"
        run.receiverName = "\(tag)r"
        run.connections = [run.senderName, run.receiverName].enumerated().map { index, name in
            ChatConnection(index: index, name: name, loop: fleet.loop, group: fleet.group, handler: run)
        }
        var finished = false
        // CPU times from the start of the traffic: logins (an Argon2id hash each) are not counted.
        var cpuBefore = ProcessTimes.ownCPUSeconds()
        var serverCPUBefore: Double?
        if fleet.connectAndLogIn(run.connections, server: options.server) {
            cpuBefore = ProcessTimes.ownCPUSeconds()
            serverCPUBefore = options.serverPID.flatMap(ProcessTimes.cpuSeconds(of:))
            fleet.loop.execute { run.begin() }
            finished = fleet.waitForEnd(stallTimeout: options.drain) {
                run.progress.sentCount + run.ledgers.stored.distinct + run.ledgers.delivered.distinct
            }
        }
        let cpuAfter = ProcessTimes.ownCPUSeconds()
        let serverCPUAfter = options.serverPID.flatMap(ProcessTimes.cpuSeconds(of:))
        var result = fleet.loop.runAndWait { [finished] in run.result(finished: finished) }
        fleet.shutDown(run.connections)
        result.cpu.clientCPUSeconds = cpuAfter - cpuBefore
        if let before = serverCPUBefore, let after = serverCPUAfter { result.cpu.serverCPUSeconds = after - before }
        result.problems.connectionFailures = fleet.failures
        return result
    }

    /// The clock starts. Loop thread.
    private func begin() {
        progress.start = MonotonicClock.now()
        tick()
    }

    /// When message `index` (from 0) is due, nanoseconds on ``MonotonicClock``.
    private func dueTime(of index: Int) -> UInt64 { progress.start + UInt64(Double(index) * 1e9 / options.rate) }

    /// Sends what is due and sleeps until the next message is (at least 1 ms when the window is full:
    /// then acknowledgements send the rest).
    private func tick() {
        guard !progress.isFinished else { return }
        let now = MonotonicClock.now()
        sendDue(at: now)
        guard progress.sentCount < options.total else { return }
        let next = dueTime(of: progress.sentCount)
        let delay = next > now ? next - now : 1_000_000
        fleet.loop.scheduleTask(in: .nanoseconds(Int64(delay))) { [self] in tick() }
    }

    /// Writes every message due by `now` while the window has room.
    private func sendDue(at now: UInt64) {
        let sender = connections[0]
        while progress.sentCount < options.total, now >= dueTime(of: progress.sentCount),
            progress.sentCount - ledgers.stored.distinct < options.window, sender.isLoggedIn
        {
            let id = UInt64(progress.sentCount + 1)
            sender.send(.v2(.directMessage(id: id, to: receiverName, text: MessageText.make(id: id, bytes: options.textBytes))))
            let written = MonotonicClock.now()
            sendTimes[progress.sentCount] = written
            latencies.maxLateness = max(latencies.maxLateness, written &- dueTime(of: progress.sentCount))
            progress.sentCount += 1
            progress.lastSend = written
        }
    }

    private func checkFinished() {
        guard !progress.isFinished, progress.sentCount == options.total, ledgers.stored.distinct == options.total,
            ledgers.delivered.distinct == options.total
        else { return }
        progress.isFinished = true
        fleet.didFinish()
    }

    // MARK: - ChatConnectionHandler (loop thread)

    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64) { fleet.didLogIn() }

    func connection(_ connection: ChatConnection, didFail reason: String) { fleet.didFail(reason) }

    func connection(_ connection: ChatConnection, didReceive event: ServerEvent, at now: UInt64) {
        let isSender = connection.index == 0
        switch event {
        case .stored(let id, let sequence):
            guard isSender, sequence != nil, id >= 1, id <= UInt64(progress.sentCount) else {
                tally.unexpected += 1
                return
            }
            guard ledgers.stored.record(id) else { return }
            latencies.storedLatencies.append(now &- sendTimes[Int(id) - 1])
            sendDue(at: now)
            checkFinished()
        case .delivery(let from, let text, _, let conversation?, let sequence?):
            switch positions[connection.index].arrive(conversation, sequence: sequence) {
            case .next: break
            case .duplicate: tally.resentDeliveries += 1
            case .gap(let missing): tally.gaps += missing
            }
            connection.acknowledge(conversation, upTo: sequence)
            guard let id = MessageText.id(in: text), from == senderName, id >= 1, id <= UInt64(progress.sentCount) else {
                tally.unexpected += 1
                return
            }
            if isSender {
                ledgers.echoes.record(id)
            } else if ledgers.delivered.record(id) {
                latencies.deliveryLatencies.append(now &- sendTimes[Int(id) - 1])
                checkFinished()
            }
        case .receipt:
            tally.receipts += 1
        case .error(let code, let detail, let id):
            tally.serverErrors += 1
            if tally.serverErrors <= 3 {
                Output.complain("\(connection.name): server error \(code)\(id.map { " for #\($0)" } ?? ""): \(detail)")
            }
        case .heartbeatAck, .ignored:
            break
        default:
            tally.unexpected += 1
        }
    }

    /// The figures so far. Loop thread.
    private func result(finished: Bool) -> LatencyResult {
        var result = LatencyResult(options: options)
        result.finished = finished
        result.counts.sent = progress.sentCount
        result.counts.stored = ledgers.stored.distinct
        result.counts.storedDuplicates = ledgers.stored.duplicates + ledgers.stored.unknown
        result.counts.delivered = ledgers.delivered.distinct
        result.counts.deliveredDuplicates = ledgers.delivered.duplicates + ledgers.delivered.unknown
        result.counts.resentDeliveries = tally.resentDeliveries
        result.counts.gaps = tally.gaps
        result.counts.echoes = ledgers.echoes.distinct
        result.counts.receipts = tally.receipts
        result.problems.serverErrors = tally.serverErrors
        result.problems.unexpected = tally.unexpected
        result.timing.sendingSeconds = progress.sentCount > 0 ? Double(progress.lastSend &- progress.start) / 1e9 : 0
        result.timing.maxLatenessMicroseconds = Double(latencies.maxLateness) / 1e3
        result.timing.deliveryLatency = Percentiles(latencies.deliveryLatencies)
        result.timing.storedLatency = Percentiles(latencies.storedLatencies)
        return result
    }
}
