import SocketBench
import AsyncSocket
import ChatProtocol
import Foundation

/// `chat-bench throughput`: S senders each send N numbered direct messages, keeping up to W sent and
/// not yet acknowledged, to their receivers; every `stored` and every delivery is checked off by id.
///
/// ```
/// sender s1 ── direct #1…#N (≤ W unacknowledged) ──▶ im-server ──▶ delivery seq 1…N ──▶ receiver r1
///           ◀── stored #id (+ its own delivery, + receipts) ──┘            ◀── received (one per pass)
/// ```
///
/// The messages are encoded before the clock starts; the clock runs from the first send to the last
/// `stored` (the throughput) and to the last delivery. All connections share one event-loop thread,
/// where this object lives (hence the unchecked Sendable): ``run(_:)`` only waits.
final class ThroughputRun: ChatConnectionHandler, @unchecked Sendable {
    private let options: ThroughputOptions
    private let fleet: Fleet
    /// Senders first (indices 0..<S), then receivers.
    private var connections: [ChatConnection] = []
    private var senderIndexByName: [String: Int] = [:]
    /// Per sender: its messages' frames, how many are sent, and when each was sent.
    private var sending = Sending()
    /// Per sender: which ids were acknowledged, delivered to the receiver, and echoed to the sender
    /// (the server delivers each direct message to its sender's own stored session too).
    private var ledgers = Ledgers()
    /// Per connection.
    private var positions: [ConversationPositions] = []
    private var storedLatencies: [UInt64] = []
    private var tally = Tally()
    private var progress = Progress()

    /// Per sender: its messages' frames (message id − 1), how many are sent, and when each was sent.
    private struct Sending {
        var frames: [[Data]] = []
        var sentCount: [Int] = []
        var sendTimes: [[UInt64]] = []
    }

    /// Per sender: which ids were acknowledged, delivered to the receiver, and echoed to the sender.
    private struct Ledgers {
        var stored: [MessageLedger] = []
        var delivered: [MessageLedger] = []
        var echoes: [MessageLedger] = []
    }

    /// The counts: acknowledged and delivered in all, deliveries again, gaps, receipts, errors,
    /// anything unexpected.
    private struct Tally {
        var totalStored = 0, totalDelivered = 0
        var resentDeliveries = 0, gaps: UInt64 = 0, receipts = 0, serverErrors = 0, unexpected = 0
    }

    /// The clock at the first send, the last acknowledgement and the last delivery; the end.
    private struct Progress {
        var firstSend: UInt64 = 0, lastStored: UInt64 = 0, lastDelivered: UInt64 = 0
        var isFinished = false
    }

    private init(options: ThroughputOptions, fleet: Fleet) {
        self.options = options
        self.fleet = fleet
    }

    /// Runs `options`' load, blocking the calling thread until every message is acknowledged and
    /// delivered, or a connection fails, or nothing has moved for ``ThroughputOptions/stallTimeout``.
    static func run(_ options: ThroughputOptions) -> ThroughputResult {
        let fleet = Fleet()
        let run = ThroughputRun(options: options, fleet: fleet)
        let tag = RunTag.make()
        let senderNames = (1...options.senders).map { "\(tag)s\($0)" }
        let receiverNames = options.receivers == .shared ? ["\(tag)r"] : (1...options.senders).map { "\(tag)r\($0)" }
        let names = senderNames + receiverNames
        run.connections = names.enumerated().map { index, name in
            ChatConnection(index: index, name: name, loop: fleet.loop, group: fleet.group, handler: run)
        }
        for (index, name) in senderNames.enumerated() { run.senderIndexByName[name] = index }
        run.positions = Array(repeating: ConversationPositions(), count: names.count)
        run.prepareMessages(senderNames: senderNames, receiverNames: receiverNames)

        var finished = false
        // CPU times from the start of the traffic: logins (an Argon2id hash each) are not counted.
        var cpuBefore = ProcessTimes.ownCPUSeconds()
        var serverCPUBefore: Double?
        if fleet.connectAndLogIn(run.connections, server: options.server) {
            cpuBefore = ProcessTimes.ownCPUSeconds()
            serverCPUBefore = options.serverPID.flatMap(ProcessTimes.cpuSeconds(of:))
            fleet.loop.execute { run.start() }
            finished = fleet.waitForEnd(stallTimeout: options.stallTimeout) { run.tally.totalStored + run.tally.totalDelivered }
        }
        let cpuAfter = ProcessTimes.ownCPUSeconds()
        let serverCPUAfter = options.serverPID.flatMap(ProcessTimes.cpuSeconds(of:))
        let result = fleet.loop.runAndWait { [finished] in run.result(finished: finished) }
        fleet.shutDown(run.connections)
        var final = result
        final.cpu.clientCPUSeconds = cpuAfter - cpuBefore
        if let before = serverCPUBefore, let after = serverCPUAfter { final.cpu.serverCPUSeconds = after - before }
        final.problems.connectionFailures = fleet.failures
        return final
    }

    /// Encodes every message of every sender (before the clock starts, so the load generator spends
    /// its time on the wire, not in JSON).
    private func prepareMessages(senderNames: [String], receiverNames: [String]) {
        let codec = ChatCodec(version: .v2)
        let count = options.messages
        for sender in senderNames.indices {
            let receiver = receiverNames[options.receivers == .shared ? 0 : sender]
            sending.frames.append(
                (1...count).compactMap { id in
                    let text = MessageText.make(id: UInt64(id), bytes: options.textBytes)
                    return try? codec.encode(.v2(.directMessage(id: UInt64(id), to: receiver, text: text)))
                })
            sending.sentCount.append(0)
            sending.sendTimes.append([UInt64](repeating: 0, count: count))
            ledgers.stored.append(MessageLedger(count: count))
            ledgers.delivered.append(MessageLedger(count: count))
            ledgers.echoes.append(MessageLedger(count: count))
        }
        storedLatencies.reserveCapacity(count * senderNames.count)
    }

    /// The clock starts: every sender's first window. Loop thread.
    private func start() {
        progress.firstSend = MonotonicClock.now()
        for sender in 0..<options.senders { topUp(sender, at: progress.firstSend) }
    }

    /// Sends sender `index`'s next messages while fewer than the window are unacknowledged.
    private func topUp(_ index: Int, at now: UInt64) {
        let connection = connections[index]
        let limit = min(sending.frames[index].count, ledgers.stored[index].distinct + options.window)
        while sending.sentCount[index] < limit, connection.isLoggedIn {
            let next = sending.sentCount[index]
            sending.sendTimes[index][next] = now
            connection.send(encoded: sending.frames[index][next])
            sending.sentCount[index] = next + 1
        }
    }

    private func checkFinished() {
        let expected = options.senders * options.messages
        guard !progress.isFinished, tally.totalStored == expected, tally.totalDelivered == expected else { return }
        progress.isFinished = true
        fleet.didFinish()
    }

    // MARK: - ChatConnectionHandler (loop thread)

    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64) { fleet.didLogIn() }

    func connection(_ connection: ChatConnection, didFail reason: String) { fleet.didFail(reason) }

    func connection(_ connection: ChatConnection, didReceive event: ServerEvent, at now: UInt64) {
        let isSender = connection.index < options.senders
        switch event {
        case .stored(let id, let sequence):
            guard isSender, sequence != nil else {
                tally.unexpected += 1
                return
            }
            let sender = connection.index
            guard ledgers.stored[sender].record(id) else { return }
            tally.totalStored += 1
            progress.lastStored = now
            storedLatencies.append(now &- sending.sendTimes[sender][Int(id) - 1])
            topUp(sender, at: now)
            checkFinished()
        case .delivery(let from, let text, _, let conversation?, let sequence?):
            switch positions[connection.index].arrive(conversation, sequence: sequence) {
            case .next: break
            case .duplicate: tally.resentDeliveries += 1
            case .gap(let missing): tally.gaps += missing
            }
            connection.acknowledge(conversation, upTo: sequence)
            guard let id = MessageText.id(in: text), let sender = senderIndexByName[from] else {
                tally.unexpected += 1
                return
            }
            if isSender {
                if sender == connection.index { ledgers.echoes[sender].record(id) } else { tally.unexpected += 1 }
            } else if ledgers.delivered[sender].record(id) {
                tally.totalDelivered += 1
                progress.lastDelivered = now
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
    private func result(finished: Bool) -> ThroughputResult {
        var result = ThroughputResult(options: options)
        result.finished = finished
        result.counts.sent = sending.sentCount.reduce(0, +)
        result.counts.stored = tally.totalStored
        result.counts.storedDuplicates = ledgers.stored.reduce(0) { $0 + $1.duplicates + $1.unknown }
        result.counts.delivered = tally.totalDelivered
        result.counts.deliveredDuplicates = ledgers.delivered.reduce(0) { $0 + $1.duplicates + $1.unknown }
        result.counts.resentDeliveries = tally.resentDeliveries
        result.counts.gaps = tally.gaps
        result.counts.echoes = ledgers.echoes.reduce(0) { $0 + $1.distinct }
        result.counts.receipts = tally.receipts
        result.problems.serverErrors = tally.serverErrors
        result.problems.unexpected = tally.unexpected
        result.counts.acknowledgementsSent = connections.reduce(0) { $0 + $1.acknowledgementsSent }
        if tally.totalStored > 0 { result.timing.storedSeconds = Double(progress.lastStored &- progress.firstSend) / 1e9 }
        if tally.totalDelivered > 0 { result.timing.deliveredSeconds = Double(progress.lastDelivered &- progress.firstSend) / 1e9 }
        result.timing.storedLatency = Percentiles(storedLatencies)
        return result
    }
}

/// Names of a run's users: a random tag, so every run has new users and new conversations (sequence
/// numbers from 1) even against a server that keeps the users of earlier runs.
enum RunTag {
    /// The password every bench user claims its name with.
    static let password = "chat-bench password"

    /// `cb` and 6 random lowercase hexadecimal digits: `cb3fa91c`.
    static func make() -> String {
        let hex = String(UInt32.random(in: 0..<(1 << 24)), radix: 16)
        return "cb" + String(repeating: "0", count: 6 - hex.count) + hex
    }
}
