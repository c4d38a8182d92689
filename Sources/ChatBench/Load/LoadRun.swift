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

    let options: LoadOptions
    let fleet: Fleet
    let spreads: Bool
    var ledger: DeliveryLedger
    var result: LoadResult
    var positions: [ConversationPositions]
    /// The connections and which users are logged in.
    var roster = Roster()
    /// Which phases are under way.
    var phase = Phases()
    /// The loop's clock at the run's milestones (ns).
    var times = Milestones()
    /// What is due, sent and outstanding.
    var counts = Counts()
    /// `--failover`: users away and their reconnects.
    var failover = Failover()
    /// The semaphores ``run(_:)`` waits on between phases.
    let signals = Signals()

    /// The connections, and the users logged in.
    struct Roster {
        /// The users (0..<users), then the probes.
        var connections: [ChatConnection] = []
        var indexByName: [String: Int] = [:]
        /// Users logged in, for picking senders and recipients, and where each is in that list.
        var active: [Int] = []
        var activeSlot: [Int: Int] = [:]
    }

    /// Which phases are under way.
    struct Phases {
        var isSending = false, isProbing = false, isDraining = false, isLoggingIn = false
        /// The result has been taken: nothing reconnects any more.
        var isFinished = false
        var drainedSignalled = false
    }

    /// The loop's clock at the run's milestones (ns).
    struct Milestones {
        var firstConnect: UInt64 = 0, lastLogin: UInt64 = 0
        var trafficStart: UInt64 = 0, lastDelivery: UInt64 = 0, lastBroadcastDelivery: UInt64 = 0
        var probeStart: UInt64 = 0
    }

    /// What is due, sent and outstanding.
    struct Counts {
        var directsDue = 0, broadcastsDue = 0, probesDue = 0
        var probesLoggedIn = 0
        var loginsStarted = 0
        var loginsEnded = 0
        var heartbeatTicks = 0
        /// Heartbeats sent by connections still open and not answered yet.
        var heartbeatsOutstanding = 0
        /// Numbered (version 2) messages sent; the rest of the figures live in ``result`` and ``ledger``.
        var numberedSent = 0
    }

    /// `--failover`: users away since a drop (when it was read), each one's schedule, and how many
    /// attempts each user made in all (its next server).
    struct Failover {
        var droppedAt: [Int: UInt64] = [:]
        var schedules: [Int: ReconnectSchedule] = [:]
        var attemptsMade: [Int: Int] = [:]
        /// Users whose login was accepted at some time.
        var loggedInOnce: Set<Int> = []
    }

    /// The semaphores ``run(_:)`` waits on between phases, signalled on the loop.
    struct Signals {
        let probesReady = DispatchSemaphore(value: 0)
        let loginsDone = DispatchSemaphore(value: 0)
        let trafficDone = DispatchSemaphore(value: 0)
        let drained = DispatchSemaphore(value: 0)
    }

    init(options: LoadOptions, fleet: Fleet) {
        self.options = options
        self.fleet = fleet
        ledger = DeliveryLedger(receivers: options.connections)
        result = LoadResult(options: options)
        positions = Array(repeating: ConversationPositions(), count: options.connections)
        spreads = SourceAddresses.spreads(options)
    }

    var login: ChatLogin {
        ChatLogin(version: options.version, password: options.stored ? RunTag.password : nil)
    }

    /// Runs `options`' load, blocking the calling thread until it ends (see the phases above).
    static func run(_ options: LoadOptions) -> LoadResult {
        let fleet = Fleet()
        let run = LoadRun(options: options, fleet: fleet)
        let tag = RunTag.make()
        let names = (1...options.users).map { "\(tag)u\($0)" } + (options.rates.probeRate > 0 ? ["\(tag)p1", "\(tag)p2"] : [])
        run.roster.connections = names.enumerated().map { index, name in
            let connection = ChatConnection(
                index: index, name: name, login: run.login, webSocketPath: options.webSocketPath, loop: fleet.loop, group: fleet.group,
                handler: run)
            connection.keepsOutbox = options.failover
            return connection
        }
        for (index, name) in names.enumerated() { run.roster.indexByName[name] = index }
        let loginWait = DispatchTime.now() + options.timing.loginTimeout

        if options.rates.probeRate > 0 {
            fleet.loop.execute { run.connectProbes() }
            guard run.signals.probesReady.wait(timeout: loginWait) == .success,
                run.fleet.loop.runAndWait({ run.counts.probesLoggedIn == 2 })
            else {
                Output.complain("the two probe users did not log in")
                return run.finish(cpuBefore: nil)
            }
            fleet.loop.execute { run.startProbes() }
        }
        let rssBefore = run.serverRSS()
        fleet.loop.execute { run.startLogins() }
        if run.signals.loginsDone.wait(timeout: loginWait) == .timedOut {
            Output.complain("not every user logged in within \(Format.decimal(options.timing.loginTimeout, 1)) s")
            fleet.loop.runAndWait { run.endLogins(timedOut: true) }
        }
        let rssAfter = run.serverRSS()
        fleet.loop.runAndWait {
            run.result.resources.serverRSSBefore = rssBefore
            run.result.resources.serverRSSAfterLogins = rssAfter
        }
        let cpuBefore = (own: ProcessTimes.ownCPUSeconds(), servers: run.serverCPU())
        fleet.loop.execute { run.startTraffic() }
        run.signals.trafficDone.wait()
        _ = run.signals.drained.wait(timeout: .now() + options.timing.drain)
        return run.finish(cpuBefore: cpuBefore)
    }

    /// The result, with the CPU time since `cpuBefore` and the servers' RSS now; closes everything.
    func finish(cpuBefore: (own: Double, servers: Double?)?) -> LoadResult {
        let ownCPU = ProcessTimes.ownCPUSeconds()
        let serversCPU = serverCPU()
        let rssEnd = serverRSS()
        var final = fleet.loop.runAndWait { [self] in makeResult() }
        fleet.shutDown(roster.connections)
        if let cpuBefore {
            final.resources.clientCPUSeconds = ownCPU - cpuBefore.own
            if let before = cpuBefore.servers, let after = serversCPU { final.resources.serverCPUSeconds = after - before }
        }
        final.resources.serverRSSEnd = rssEnd
        return final
    }

    /// The summed RSS of the server processes (KiB), nil without `--server-pid` or when one cannot be read.
    func serverRSS() -> Int? {
        guard !options.serverPIDs.isEmpty else { return nil }
        let values = options.serverPIDs.compactMap(ProcessStatus.residentKilobytes(of:))
        return values.count == options.serverPIDs.count ? values.reduce(0, +) : nil
    }

    /// The summed CPU seconds of the server processes, nil without `--server-pid` or when one cannot be read.
    func serverCPU() -> Double? {
        guard !options.serverPIDs.isEmpty else { return nil }
        let values = options.serverPIDs.compactMap(ProcessTimes.cpuSeconds(of:))
        return values.count == options.serverPIDs.count ? values.reduce(0, +) : nil
    }
}
