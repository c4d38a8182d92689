import AsyncSocket

/// When a run's phases begin and end, in nanoseconds on ``MonotonicClock``.
struct RunSchedule: Sendable {
    /// Traffic starts (every connection has connected or failed).
    var go: UInt64
    /// Measuring starts: the warmup ends.
    var measureStart: UInt64
    /// Measuring ends; no new frames (or heartbeats) start from here on.
    var measureEnd: UInt64
}

/// The figures of one event loop's connections when a run ends.
struct LoopFigures: Sendable {
    /// Frames echoed and verified within the measured window.
    var messages: UInt64 = 0
    /// Bytes (length fields included) of those frames.
    var bytes: UInt64 = 0
    /// Their round-trip latencies, nanoseconds.
    var latency = LatencyHistogram()
    /// Connections that failed after connecting (closed by the peer, a socket error, a mismatched echo).
    var errors = 0
    /// Echoes that differed from what was sent (each also ends its connection and counts as an error).
    var mismatches = 0
    /// Connections open at the end that never failed nor missed a heartbeat echo.
    var alive = 0
    /// WebSocket runs: upgrades whose answer accepted permessage-deflate.
    var deflateAccepted = 0
    /// Corpus runs, over the whole run: message bytes sent and the payload bytes that carried them
    /// (compressed or not), and the same for the echoes received.
    var plainBytesSent = 0, wireBytesSent = 0, plainBytesReceived = 0, wireBytesReceived = 0
    /// Idle heartbeats sent, echoed, and missed (the previous echo not back when the next was due, or
    /// the last not back by the end of the grace period). Counted over the whole run.
    var heartbeatsSent = 0, heartbeatsEchoed = 0, heartbeatsMissed = 0

    /// Adds `other`'s figures to these.
    mutating func add(_ other: LoopFigures) {
        messages += other.messages
        bytes += other.bytes
        latency.merge(other.latency)
        errors += other.errors
        mismatches += other.mismatches
        alive += other.alive
        deflateAccepted += other.deflateAccepted
        plainBytesSent += other.plainBytesSent
        wireBytesSent += other.wireBytesSent
        plainBytesReceived += other.plainBytesReceived
        wireBytesReceived += other.wireBytesReceived
        heartbeatsSent += other.heartbeatsSent
        heartbeatsEchoed += other.heartbeatsEchoed
        heartbeatsMissed += other.heartbeatsMissed
    }
}

/// What one event loop of a client run shares between its connections: the run's settings, its
/// figures, and (idle mode) the heartbeat clock. Used only on that loop's thread (hence the unchecked
/// Sendable), except `init`, which runs before any connection does.
final class LoopState: @unchecked Sendable {
    let eventLoop: EventLoop
    let options: ClientOptions
    /// The connections' TLS settings (``ClientOptions/tlsSettings``), made once.
    let tlsSettings: TLSConfiguration?
    let pattern: FramePattern
    /// A WebSocket run's masked frames (carrying ``pattern``'s payloads), or nil for LP4.
    let webSocketPattern: WebSocketFramePattern?
    /// A corpus run's messages (`--corpus chat`), or nil.
    let corpus: WebSocketCorpus?
    /// This loop's connections, in the order of their heartbeats.
    var connections: [BenchConnection] = []
    /// Set when traffic starts.
    private(set) var schedule = RunSchedule(go: 0, measureStart: .max, measureEnd: .max)
    /// Figures so far (loop-confined, so unchecked for exclusivity: no runtime access record per echo).
    @exclusivity(unchecked) var figures = LoopFigures()
    /// Set when the run ends: from then on, disconnects are ours, not errors.
    private(set) var isStopping = false
    /// Index of this loop in the group, and the group's size (to stagger heartbeats across loops).
    private let index: Int, loopCount: Int
    /// Next connection whose heartbeat is due (idle).
    private var heartbeatCursor = 0

    init(
        eventLoop: EventLoop, index: Int, loopCount: Int, options: ClientOptions, pattern: FramePattern,
        webSocketPattern: WebSocketFramePattern? = nil, corpus: WebSocketCorpus? = nil
    ) {
        self.webSocketPattern = webSocketPattern
        self.corpus = corpus
        self.eventLoop = eventLoop
        self.index = index
        self.loopCount = loopCount
        self.options = options
        tlsSettings = options.tlsSettings
        self.pattern = pattern
    }

    /// Errors told on standard error so far; only the first few are.
    private var errorsTold = 0

    /// Tells the first 3 errors of this loop on standard error.
    func reportError(_ text: String) {
        errorsTold += 1
        if errorsTold <= 3 { Output.complain(text) }
    }

    /// Counts a frame echoed at `now` after `latency` nanoseconds, if `now` is within the measured window
    /// (`bytes`: its size when not the pattern's frame size, a corpus message's).
    func recordEcho(at now: UInt64, latency: UInt64, bytes: Int? = nil) {
        if options.mode == .idle { figures.heartbeatsEchoed += 1 }
        guard now >= schedule.measureStart && now < schedule.measureEnd else { return }
        figures.messages += 1
        figures.bytes += UInt64(bytes ?? pattern.frameSize)
        figures.latency.record(latency)
    }

    /// Starts the traffic: each connection's first window of frames, or (idle) the heartbeat clock,
    /// first heartbeats staggered evenly over 0.9 of a period as loadgen does. Loop thread.
    func start(_ schedule: RunSchedule) {
        self.schedule = schedule
        guard options.mode == .idle else {
            let now = MonotonicClock.now()
            for connection in connections { connection.startSending(at: now) }
            return
        }
        let period = options.heartbeat * 1e9
        for (position, connection) in connections.enumerated() {
            let fraction = (Double(position) + Double(index) / Double(loopCount)) / Double(connections.count)
            connection.nextHeartbeat = schedule.go + UInt64(0.9 * fraction * period)
        }
        heartbeatTick()
    }

    /// Sends the heartbeats that are due and schedules the next tick (every connection has the same
    /// period, so they fall due in the order of ``connections``): the work of a tick is the heartbeats
    /// it sends, whatever the number of connections, and the loop holds this one timer. Loop thread.
    private func heartbeatTick() {
        let now = MonotonicClock.now()
        guard !connections.isEmpty, !isStopping, now < schedule.measureEnd else { return }
        let period = UInt64(options.heartbeat * 1e9)
        while connections[heartbeatCursor].nextHeartbeat <= now {
            let connection = connections[heartbeatCursor]
            connection.nextHeartbeat += period
            connection.sendHeartbeat(at: now)
            heartbeatCursor = (heartbeatCursor + 1) % connections.count
        }
        // Until the next heartbeat is due, but no sooner than a tick from now (heartbeats due in between
        // go out together then), and at most 50 ms (or a tick) so the end of the run is seen.
        let tick = UInt64(options.tick * 1e9)
        let due = min(connections[heartbeatCursor].nextHeartbeat, schedule.measureEnd) - now
        let delay = min(max(due, tick), max(tick, 50_000_000))
        eventLoop.scheduleTask(in: .nanoseconds(Int64(delay))) { [self] in heartbeatTick() }
    }

    /// Ends the run on this loop and returns its figures: idle connections whose last heartbeat has no
    /// echo yet count as missed. Loop thread.
    func stop() -> LoopFigures {
        isStopping = true
        for connection in connections where connection.isOpen {
            if options.mode == .idle && connection.awaitsEcho {
                figures.heartbeatsMissed += 1
                connection.markFailed()
            }
        }
        figures.alive = connections.count { $0.isOpen && !$0.hasFailed }
        return figures
    }
}
