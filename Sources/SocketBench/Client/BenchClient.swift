import AsyncSocket
import Foundation

/// Runs one client load against an LP4 echo server and returns its figures: connects every connection
/// (at most 256 connects at a time), starts the traffic, lets `warmup` seconds pass unmeasured, measures
/// for `duration` seconds, then (idle: after a grace of min(heartbeat, 2) seconds for the last echoes)
/// collects each loop's figures, samples the server's memory and closes everything.
///
/// Connections run on their own ``EventLoopGroup`` of ``ClientOptions/loops`` threads, callbacks on the
/// loop threads; the calling thread only waits.
enum BenchClient {
    /// Runs `options`' load, blocking the calling thread for the whole run (warmup + duration, plus
    /// connecting and, idle, the grace period).
    static func run(_ options: ClientOptions) -> BenchResult {
        let group = EventLoopGroup(numberOfThreads: options.loops, name: "socket-bench-client")
        let pattern = FramePattern(payloadSize: options.size, printable: options.webSocket?.text == true)
        let webSocketPattern = options.webSocket.map { settings in
            WebSocketFramePattern(
                payloads: pattern,
                opcode: options.mode == .idle
                    ? WebSocketFramePattern.pingOpcode
                    : settings.text ? WebSocketFramePattern.textOpcode : WebSocketFramePattern.binaryOpcode)
        }
        let corpus = options.webSocket?.corpus == true ? WebSocketCorpus() : nil
        let loops = group.loops.enumerated().map { index, loop in
            LoopState(
                eventLoop: loop, index: index, loopCount: options.loops, options: options, pattern: pattern,
                webSocketPattern: webSocketPattern, corpus: corpus)
        }
        let connector = Connector(host: options.host, port: options.port, spreadSources: options.mode == .idle)
        let connections = (0..<options.connections).map { id in
            BenchConnection(id: id, loop: loops[id % loops.count], connector: connector, group: group)
        }
        for (index, loop) in loops.enumerated() {
            loop.connections = stride(from: index, to: connections.count, by: loops.count).map { connections[$0] }
        }
        let rssBefore = options.serverPID.flatMap(ProcessStatus.residentKilobytes(of:))
        let started = MonotonicClock.now()
        let (connected, connectFailures) = connector.connectAll(connections)
        // Nothing to measure when no connection got through: report the failures at once.
        let measures = connected > 0

        if options.mode == .idle {
            Output.complain(
                String(format: "connected %d/%d in %.2f s", connected, options.connections, Double(MonotonicClock.now() - started) / 1e9))
            if let goFile = options.goFile { waitForFile(goFile) }
            Output.complain(startLine(of: options))
        }
        let go = MonotonicClock.now()
        let measureStart = go + UInt64(options.warmup * 1e9)
        let schedule = RunSchedule(go: go, measureStart: measureStart, measureEnd: measureStart + UInt64(options.duration * 1e9))
        var cpuAtStart: Double?, cpuAtEnd: Double?
        if measures {
            for loop in loops { loop.eventLoop.execute { loop.start(schedule) } }
            MonotonicClock.sleep(until: schedule.measureStart)
            cpuAtStart = options.serverPID.flatMap(ProcessStatus.cpuSeconds(of:))
            MonotonicClock.sleep(until: schedule.measureEnd)
            cpuAtEnd = options.serverPID.flatMap(ProcessStatus.cpuSeconds(of:))
            if options.mode == .idle { MonotonicClock.sleep(until: schedule.measureEnd + UInt64(min(options.heartbeat, 2) * 1e9)) }
        }

        var figures = LoopFigures()
        for loop in loops { figures.add(loop.eventLoop.runAndWait { loop.stop() }) }
        let rss = options.serverPID.flatMap(ProcessStatus.residentKilobytes(of:))
        for connection in connections { connection.socket.disconnect() }
        group.shutdown()
        // Connections hold their loop state and the connector unowned: keep all alive until no callback can run.
        withExtendedLifetime((connections, loops, connector)) {}

        return BenchResult(
            options: options, seconds: options.duration, messages: figures.messages, bytes: figures.bytes,
            latency: figures.latency, errors: figures.errors + connectFailures, mismatches: figures.mismatches,
            connected: connected, connectFailures: connectFailures, alive: figures.alive,
            heartbeatsSent: figures.heartbeatsSent, heartbeatsEchoed: figures.heartbeatsEchoed,
            heartbeatsMissed: figures.heartbeatsMissed, serverRSSKilobytes: rss, serverRSSBeforeKilobytes: rssBefore,
            deflateAccepted: figures.deflateAccepted,
            compression: options.webSocket?.corpus == true
                ? BenchResult.Compression(
                    plainSent: figures.plainBytesSent, wireSent: figures.wireBytesSent, plainReceived: figures.plainBytesReceived,
                    wireReceived: figures.wireBytesReceived) : nil,
            serverCPUSeconds: cpuAtEnd.flatMap { end in cpuAtStart.map { end - $0 } })
    }

    /// The idle run's line when the heartbeats start, on standard error, with the wall clock (seconds
    /// since 1970, UTC), so a script running many clients knows when all of them hold their connections:
    /// `heartbeats every 30 s for 420 s from unix 1765044000.123`.
    static func startLine(of options: ClientOptions, now: Date = Date()) -> String {
        String(format: "heartbeats every %g s for %g s from unix %.3f", options.heartbeat, options.duration, now.timeIntervalSince1970)
    }

    /// Returns once `path` exists, looking every 50 ms.
    private static func waitForFile(_ path: String) {
        while access(path, F_OK) != 0 { usleep(50_000) }
    }

    /// Runs `options`' load on a thread of its own and returns its figures, without blocking a thread of
    /// Swift's cooperative pool.
    static func run(_ options: ClientOptions) async -> BenchResult {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: run(options) as BenchResult) }.start()
        }
    }
}
