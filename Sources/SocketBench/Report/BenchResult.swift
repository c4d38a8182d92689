import Foundation

/// The outcome of one client run, with the figures of its RESULT line and CSV row. A value, made once
/// every loop has stopped; units are in each property's name or comment (seconds, bytes, KiB, µs, ns).
struct BenchResult: Sendable {
    /// The run's settings (mode, connections, sizes, …).
    let options: ClientOptions
    /// Seconds measured (the warmup excluded).
    let seconds: Double
    /// Frames echoed and verified within the measured window.
    let messages: UInt64
    /// Bytes of those frames, 4-byte length fields included.
    let bytes: UInt64
    /// Their round-trip latencies, nanoseconds.
    let latency: LatencyHistogram
    /// Connections that connected and then failed, plus connects that failed.
    let errors: Int
    /// Echoes that differed from what was sent.
    let mismatches: Int
    /// Connections that connected, and connects that failed.
    let connected: Int, connectFailures: Int
    /// Connections open at the end that never failed nor missed a heartbeat echo.
    let alive: Int
    /// Idle heartbeats sent, echoed and missed over the whole run.
    let heartbeatsSent: Int, heartbeatsEchoed: Int, heartbeatsMissed: Int
    /// The server's resident memory at the end, KiB, when a server PID was given and readable.
    let serverRSSKilobytes: Int?
    /// The server's resident memory before the first connect, KiB, when a server PID was given.
    var serverRSSBeforeKilobytes: Int?
    /// WebSocket runs: upgrades whose answer accepted permessage-deflate.
    var deflateAccepted = 0
    /// Corpus runs: message bytes and the payload bytes that carried them, each way, over the whole run.
    var compression: Compression?

    /// What permessage-deflate made of a corpus run's messages.
    struct Compression: Sendable, Equatable {
        var plainSent: Int, wireSent: Int, plainReceived: Int, wireReceived: Int
        /// Payload bytes sent per message byte (1 without compression).
        var sentRatio: Double { plainSent > 0 ? Double(wireSent) / Double(plainSent) : 0 }
        /// Payload bytes of the echoes per message byte.
        var echoRatio: Double { plainReceived > 0 ? Double(wireReceived) / Double(plainReceived) : 0 }
    }
    /// CPU time (user + system) the server used within the measured window, seconds, when a server PID
    /// was given: with a load generator that may be the bottleneck, the server's cost per message.
    var serverCPUSeconds: Double?

    /// The server's CPU time per message echoed in the measured window, microseconds.
    var serverCPUMicrosecondsPerMessage: Double? {
        guard let seconds = serverCPUSeconds, messages > 0 else { return nil }
        return seconds * 1e6 / Double(messages)
    }

    /// Idle runs with a server PID: the server's resident memory at the end minus before the first
    /// connect, over the connections alive, in bytes (as docs/BENCHMARKS.md's idle figures).
    var serverRSSBytesPerConnection: Double? {
        guard options.mode == .idle, let rss = serverRSSKilobytes, let before = serverRSSBeforeKilobytes, alive > 0 else { return nil }
        return Double(rss - before) * 1024 / Double(alive)
    }

    /// Messages per second over the measured window.
    var messagesPerSecond: Double { seconds > 0 ? Double(messages) / seconds : 0 }
    /// Megabytes (10^6 bytes) per second echoed over the measured window.
    var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds / 1e6 : 0 }
    /// Latency percentile `fraction` (0.5, 0.99, 0.999) in microseconds.
    func latencyMicroseconds(_ fraction: Double) -> Double { Double(latency.percentile(fraction)) / 1e3 }

    /// No errors, no mismatches and (idle) every connection alive: the process then exits 0.
    var isClean: Bool {
        errors == 0 && mismatches == 0 && (options.mode != .idle || alive == options.connections)
    }

    /// The run's figures as `key=value` pairs, in the order of the RESULT line. The first keys are those
    /// of `shared/bench/loadgen.c`'s RESULT line where it has them (`secs` and `server_rss_kb` it does
    /// not; its `duration_s` and `srv_rss_end_kb` follow with the same values, so its tools read ours).
    var fields: [(key: String, value: String)] {
        let rss = serverRSSKilobytes.map(String.init) ?? "-1"
        return [
            ("label", options.label.isEmpty ? "-" : options.label),
            ("mode", options.mode.rawValue),
            ("conns", "\(options.connections)"),
            ("size", "\(options.size)"),
            ("depth", "\(options.depth)"),
            ("secs", format(seconds, 3)),
            ("msgs", "\(messages)"),
            ("msgs_per_s", format(messagesPerSecond, 0)),
            ("mb_per_s", format(megabytesPerSecond, 2)),
            ("p50_us", format(latencyMicroseconds(0.5), 1)),
            ("p99_us", format(latencyMicroseconds(0.99), 1)),
            ("p999_us", format(latencyMicroseconds(0.999), 1)),
            ("errors", "\(errors)"),
            ("mismatches", "\(mismatches)"),
            ("alive", "\(alive)"),
            ("server_rss_kb", rss),
            ("loops", "\(options.loops)"),
            ("duration_s", format(seconds, 3)),
            ("warmup_s", format(options.warmup, 1)),
            ("bytes_echoed", "\(bytes)"),
            ("lat_mean_us", format(latency.mean / 1e3, 1)),
            ("max_us", format(Double(latency.max) / 1e3, 1)),
            ("connected", "\(connected)"),
            ("connect_fail", "\(connectFailures)"),
            ("heartbeat_s", format(options.heartbeat, 1)),
            ("hb_sent", "\(heartbeatsSent)"),
            ("hb_ok", "\(heartbeatsEchoed)"),
            ("hb_missed", "\(heartbeatsMissed)"),
            ("srv_rss_end_kb", rss),
            ("proto", options.webSocket == nil ? "lp4" : options.webSocket?.text == true ? "ws-text" : "ws"),
            ("deflate_accepted", "\(deflateAccepted)"),
            ("server_rss_per_conn_b", serverRSSBytesPerConnection.map { format($0, 0) } ?? "-1"),
            ("server_cpu_s", serverCPUSeconds.map { format($0, 2) } ?? "-1"),
            ("server_cpu_us_per_msg", serverCPUMicrosecondsPerMessage.map { format($0, 3) } ?? "-1"),
            ("sent_ratio", compression.map { format($0.sentRatio, 3) } ?? "-1"),
            ("echo_ratio", compression.map { format($0.echoRatio, 3) } ?? "-1")
        ]
    }

    private func format(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
}
