import Foundation

/// The figures of one `chat-bench throughput` run.
public struct ThroughputResult: Sendable {
    /// What was run.
    public var options: ThroughputOptions
    /// Every message was acknowledged and delivered before the run ended.
    public var finished = false
    /// Messages the run had to send: senders × messages.
    public var expected: Int { options.senders * options.messages }
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
        /// `stored` answers for an id already acknowledged, or for an id never sent.
        public var storedDuplicates = 0
        /// Distinct ids delivered to their receiver.
        public var delivered = 0
        /// Deliveries to a receiver of an id it already had under another sequence number (stored twice),
        /// or of an id never sent.
        public var deliveredDuplicates = 0
        /// Deliveries whose sequence number a connection had already received (resent by the server; a
        /// client drops them without showing them).
        public var resentDeliveries = 0
        /// Sequence numbers skipped: a delivery arrived before the ones before it.
        public var gaps: UInt64 = 0
        /// Distinct ids delivered back to their own sender's session (every stored session of a
        /// conversation gets its messages, the sender's included).
        public var echoes = 0
        /// Receipts (✓✓) the senders and receivers got.
        public var receipts = 0
        /// `received` acknowledgements the connections sent (one per conversation per loop pass).
        public var acknowledgementsSent = 0
    }

    /// What went wrong: server errors, unexpected messages, failed connections.
    public struct Problems: Sendable {
        /// Errors the server answered with.
        public var serverErrors = 0
        /// Messages the run did not expect (a `stored` without a sequence number, a delivery from a stranger, …).
        public var unexpected = 0
        /// Connections that failed, with why.
        public var connectionFailures: [String] = []
    }

    /// How long it took, and the latencies.
    public struct Timing: Sendable {
        /// Seconds from the first send to the last new `stored`.
        public var storedSeconds = 0.0
        /// Seconds from the first send to the last new delivery at a receiver.
        public var deliveredSeconds = 0.0
        /// Each message's time from being written to the socket to its `stored`, nanoseconds: under full
        /// load, mostly time queued behind the window.
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
    public init(options: ThroughputOptions) { self.options = options }

    /// Messages stored and acknowledged per second.
    public var storedPerSecond: Double { timing.storedSeconds > 0 ? Double(counts.stored) / timing.storedSeconds : 0 }
    /// Messages delivered to their receivers per second.
    public var deliveredPerSecond: Double { timing.deliveredSeconds > 0 ? Double(counts.delivered) / timing.deliveredSeconds : 0 }
    /// Messages never acknowledged.
    public var unacknowledged: Int { expected - counts.stored }
    /// Messages never delivered.
    public var lost: Int { expected - counts.delivered }
    /// Server CPU microseconds per message stored, when known.
    public var serverCPUMicrosecondsPerMessage: Double? {
        cpu.serverCPUSeconds.map { counts.stored > 0 ? $0 * 1e6 / Double(counts.stored) : 0 }
    }

    /// Every message acknowledged once and delivered once, in order, with no error.
    public var isClean: Bool {
        finished && counts.stored == expected && counts.delivered == expected && counts.storedDuplicates == 0
            && counts.deliveredDuplicates == 0
            && counts.resentDeliveries == 0 && counts.gaps == 0 && problems.serverErrors == 0 && problems.unexpected == 0
            && problems.connectionFailures.isEmpty
    }

    /// The RESULT line's fields, in order.
    public var fields: [(key: String, value: String)] {
        var fields: [(String, String)] = [
            ("mode", "throughput"), ("label", options.label.isEmpty ? "-" : options.label),
            ("senders", "\(options.senders)"), ("receivers", options.receivers.rawValue),
            ("messages_per_sender", "\(options.messages)"), ("window", "\(options.window)"),
            ("text_bytes", "\(options.textBytes)"),
            ("expected", "\(expected)"), ("sent", "\(counts.sent)"), ("stored", "\(counts.stored)"),
            ("stored_duplicates", "\(counts.storedDuplicates)"), ("delivered", "\(counts.delivered)"),
            ("delivered_duplicates", "\(counts.deliveredDuplicates)"), ("resent_deliveries", "\(counts.resentDeliveries)"),
            ("gaps", "\(counts.gaps)"), ("lost", "\(lost)"), ("unacknowledged", "\(unacknowledged)"),
            ("echoes", "\(counts.echoes)"), ("receipts", "\(counts.receipts)"), ("acks_sent", "\(counts.acknowledgementsSent)"),
            ("server_errors", "\(problems.serverErrors)"), ("unexpected", "\(problems.unexpected)"),
            ("connection_failures", "\(problems.connectionFailures.count)"),
            ("stored_seconds", Format.decimal(timing.storedSeconds, 3)), ("stored_per_s", Format.decimal(storedPerSecond, 0)),
            ("delivered_seconds", Format.decimal(timing.deliveredSeconds, 3)),
            ("delivered_per_s", Format.decimal(deliveredPerSecond, 0)),
            ("stored_p50_us", Format.decimal(timing.storedLatency.microseconds(0.5), 0)),
            ("stored_p99_us", Format.decimal(timing.storedLatency.microseconds(0.99), 0)),
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
        var lines = [
            "\(options.label.isEmpty ? "" : options.label + " ")throughput: \(options.senders) senders × \(options.messages) messages, "
                + "window \(options.window), receivers \(options.receivers.rawValue), text \(options.textBytes) B",
            "  \(Format.grouped(storedPerSecond)) msgs/s stored and acknowledged (\(counts.stored) in \(Format.decimal(timing.storedSeconds, 3)) s); "
                + "\(Format.grouped(deliveredPerSecond)) msgs/s delivered (\(counts.delivered) in \(Format.decimal(timing.deliveredSeconds, 3)) s)",
            "  send → stored µs: p50 \(Format.decimal(timing.storedLatency.microseconds(0.5), 0))  p99 \(Format.decimal(timing.storedLatency.microseconds(0.99), 0))"
                + "  max \(Format.decimal(Double(timing.storedLatency.max) / 1e3, 0))",
            "  stored \(counts.stored)/\(expected) (duplicates \(counts.storedDuplicates)), delivered \(counts.delivered)/\(expected) "
                + "(duplicates \(counts.deliveredDuplicates), resent \(counts.resentDeliveries), gaps \(counts.gaps)), lost \(lost), "
                + "echoes \(counts.echoes), receipts \(counts.receipts), server errors \(problems.serverErrors), unexpected \(problems.unexpected)",
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

/// Number formatting for reports: fixed decimals, and thousands grouped with commas for people.
enum Format {
    /// `value` with `places` decimals, `.` as the point: `1234.5` → `"1234.50"`.
    static func decimal(_ value: Double, _ places: Int) -> String { String(format: "%.\(places)f", value) }

    /// `value` rounded, with commas between thousands: `12345.6` → `"12,346"`.
    static func grouped(_ value: Double) -> String {
        let digits = String(Int64(value.rounded()))
        let negative = digits.hasPrefix("-")
        var body = Array(negative ? digits.dropFirst() : Substring(digits))
        var index = body.count - 3
        while index > 0 {
            body.insert(",", at: index)
            index -= 3
        }
        return (negative ? "-" : "") + String(body)
    }

    /// `RESULT key=value …` on one line, spaces in values replaced by `_` so the line splits on spaces.
    static func resultLine(_ fields: [(key: String, value: String)]) -> String {
        "RESULT " + fields.map { "\($0.key)=\($0.value.replacingOccurrences(of: " ", with: "_"))" }.joined(separator: " ")
    }

    /// The fields as one JSON object on one line, in order; text that reads as a number (from the
    /// older modes' string fields) is written as a number.
    static func jsonObject(_ fields: [(key: String, value: ResultValue)]) -> String {
        "{"
            + fields.map { field -> String in
                var value = field.value
                if case .text(let text) = value, let number = Double(text), number.isFinite,
                    text.first?.isNumber == true || text.first == "-"
                {
                    let decimals = text.firstIndex(of: ".").map { text.distance(from: $0, to: text.endIndex) - 1 } ?? 0
                    value = .number(number, decimals)
                }
                if case .text(let text) = value, text == "yes" || text == "no" { value = .flag(text == "yes") }
                return ResultValue.text(field.key).json + ":" + value.json
            }.joined(separator: ",") + "}"
    }
}
