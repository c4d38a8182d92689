/// The figures of one `chat-bench latency` run.
public struct LatencyResult: Sendable {
    /// What was run.
    public var options: LatencyOptions
    /// Every message was sent, acknowledged and delivered before the run ended.
    public var finished = false
    /// What was sent, acknowledged and delivered.
    public var counts = Counts()
    /// What went wrong: server errors, unexpected messages, failed connections.
    public var problems = Problems()
    /// How long it took, and the latencies.
    public var timing = Timing()
    /// CPU time of this process and of the server.
    public var cpu = CPUTime()

    /// What was sent, acknowledged and delivered.
    public struct Counts: Sendable {
        /// Messages sent.
        public var sent = 0
        /// Distinct ids acknowledged with `stored`.
        public var stored = 0
        /// `stored` answers for an id already acknowledged, or never sent.
        public var storedDuplicates = 0
        /// Distinct ids delivered to the receiver.
        public var delivered = 0
        /// Deliveries of an id the receiver already had under another sequence number, or never sent.
        public var deliveredDuplicates = 0
        /// Deliveries of a sequence number already received (resent; a client drops them).
        public var resentDeliveries = 0
        /// Sequence numbers skipped.
        public var gaps: UInt64 = 0
        /// Distinct ids delivered back to the sender's own session.
        public var echoes = 0
        /// Receipts the two users got.
        public var receipts = 0
    }

    /// What went wrong: server errors, unexpected messages, failed connections.
    public struct Problems: Sendable {
        /// Errors the server answered with.
        public var serverErrors = 0
        /// Messages the run did not expect.
        public var unexpected = 0
        /// Connections that failed, with why.
        public var connectionFailures: [String] = []
    }

    /// How long it took, and the latencies.
    public struct Timing: Sendable {
        /// Seconds from the first send to the last.
        public var sendingSeconds = 0.0
        /// The most a message was written after its due time, microseconds: the load generator's own
        /// delay (timer wake-ups, a full window), not counted in the latencies.
        public var maxLatenessMicroseconds = 0.0
        /// Per message, from writing it to the receiver reading its delivery, nanoseconds.
        public var deliveryLatency = Percentiles([])
        /// Per message, from writing it to the sender reading its `stored`, nanoseconds.
        public var storedLatency = Percentiles([])
    }

    /// CPU time of this process and of the server.
    public struct CPUTime: Sendable {
        /// CPU seconds this process used from the start of the traffic to its end (logins not counted).
        public var clientCPUSeconds = 0.0
        /// CPU seconds the server used over the same span (not its Argon2id hashes of the logins), when
        /// its process id was given.
        public var serverCPUSeconds: Double?
    }

    /// A result of `options` with nothing counted yet.
    public init(options: LatencyOptions) { self.options = options }

    /// Messages sent and never delivered.
    public var lost: Int { counts.sent - counts.delivered }
    /// Messages sent and never acknowledged.
    public var unacknowledged: Int { counts.sent - counts.stored }
    /// Every duplicate of any kind: `stored` twice, delivered twice, resent.
    public var duplicates: Int { counts.storedDuplicates + counts.deliveredDuplicates + counts.resentDeliveries }
    /// Messages per second actually sent.
    public var sentPerSecond: Double { timing.sendingSeconds > 0 && counts.sent > 1 ? Double(counts.sent - 1) / timing.sendingSeconds : 0 }
    /// Server CPU microseconds per message, when known.
    public var serverCPUMicrosecondsPerMessage: Double? {
        cpu.serverCPUSeconds.map { counts.sent > 0 ? $0 * 1e6 / Double(counts.sent) : 0 }
    }

    /// Every message sent, acknowledged once and delivered once, in order, with no error.
    public var isClean: Bool {
        finished && counts.sent == options.total && lost == 0 && unacknowledged == 0 && duplicates == 0 && counts.gaps == 0
            && problems.serverErrors == 0 && problems.unexpected == 0 && problems.connectionFailures.isEmpty
    }

    /// The RESULT line's fields, in order. Latencies in microseconds.
    public var fields: [(key: String, value: String)] {
        func us(_ value: Double) -> String { Format.decimal(value, 0) }
        var fields: [(String, String)] = [
            ("mode", "latency"), ("label", options.label.isEmpty ? "-" : options.label),
            ("rate", Format.decimal(options.rate, 0)), ("seconds", Format.decimal(options.seconds, 1)),
            ("window", "\(options.window)"), ("text_bytes", "\(options.textBytes)"),
            ("sent", "\(counts.sent)"), ("sent_per_s", Format.decimal(sentPerSecond, 0)), ("stored", "\(counts.stored)"),
            ("delivered", "\(counts.delivered)"), ("lost", "\(lost)"), ("unacknowledged", "\(unacknowledged)"),
            ("duplicates", "\(duplicates)"), ("stored_duplicates", "\(counts.storedDuplicates)"),
            ("delivered_duplicates", "\(counts.deliveredDuplicates)"), ("resent_deliveries", "\(counts.resentDeliveries)"),
            ("gaps", "\(counts.gaps)"), ("echoes", "\(counts.echoes)"), ("receipts", "\(counts.receipts)"),
            ("server_errors", "\(problems.serverErrors)"), ("unexpected", "\(problems.unexpected)"),
            ("connection_failures", "\(problems.connectionFailures.count)"),
            ("delivery_p50_us", us(timing.deliveryLatency.microseconds(0.5))),
            ("delivery_p90_us", us(timing.deliveryLatency.microseconds(0.9))),
            ("delivery_p99_us", us(timing.deliveryLatency.microseconds(0.99))),
            ("delivery_max_us", us(Double(timing.deliveryLatency.max) / 1e3)),
            ("stored_p50_us", us(timing.storedLatency.microseconds(0.5))), ("stored_p90_us", us(timing.storedLatency.microseconds(0.9))),
            ("stored_p99_us", us(timing.storedLatency.microseconds(0.99))), ("stored_max_us", us(Double(timing.storedLatency.max) / 1e3)),
            ("max_send_lateness_us", us(timing.maxLatenessMicroseconds)),
            ("client_cpu_s", Format.decimal(cpu.clientCPUSeconds, 2))
        ]
        if let server = cpu.serverCPUSeconds, let perMessage = serverCPUMicrosecondsPerMessage {
            fields.append(("server_cpu_s", Format.decimal(server, 2)))
            fields.append(("server_cpu_us_per_msg", Format.decimal(perMessage, 1)))
        }
        fields.append(("clean", isClean ? "yes" : "no"))
        return fields
    }

    /// A few lines for people.
    public var summary: String {
        func line(_ name: String, _ latency: Percentiles) -> String {
            "  \(name) µs: p50 \(Format.decimal(latency.microseconds(0.5), 0))  p90 \(Format.decimal(latency.microseconds(0.9), 0))"
                + "  p99 \(Format.decimal(latency.microseconds(0.99), 0))  max \(Format.decimal(Double(latency.max) / 1e3, 0))"
                + "  (\(latency.count) messages)"
        }
        var lines = [
            "\(options.label.isEmpty ? "" : options.label + " ")latency: \(Format.grouped(options.rate)) msgs/s for "
                + "\(Format.decimal(options.seconds, 1)) s, window \(options.window), text \(options.textBytes) B",
            line("send → delivery", timing.deliveryLatency),
            line("send → stored  ", timing.storedLatency),
            "  sent \(counts.sent) (\(Format.grouped(sentPerSecond))/s, at most \(Format.decimal(timing.maxLatenessMicroseconds, 0)) µs late), "
                + "stored \(counts.stored), delivered \(counts.delivered), lost \(lost), duplicates \(duplicates), gaps \(counts.gaps), "
                + "server errors \(problems.serverErrors), unexpected \(problems.unexpected)",
            "  client CPU \(Format.decimal(cpu.clientCPUSeconds, 2)) s"
                + (cpu.serverCPUSeconds.map {
                    " · server CPU \(Format.decimal($0, 2)) s, \(Format.decimal(serverCPUMicrosecondsPerMessage ?? 0, 1)) µs/msg"
                } ?? "")
        ]
        if !problems.connectionFailures.isEmpty {
            lines.append("  connection failures: \(problems.connectionFailures.count) (first: \(problems.connectionFailures[0]))")
        }
        if !finished { lines.append("  NOT FINISHED") }
        return lines.joined(separator: "\n")
    }
}
