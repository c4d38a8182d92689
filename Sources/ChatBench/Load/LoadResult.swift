import Foundation
import SocketBench

/// The figures of one `socket-bench client chat` load or crowd run (``LoadRun``). Latencies are
/// nanoseconds in ``LatencyHistogram``s (reported in milliseconds); memory in KiB.
public struct LoadResult: Sendable {
    /// What was run.
    public var options: LoadOptions
    /// The users' logins.
    public var logins = Logins()
    /// The messages sent, by kind, and the probes' deliveries.
    public var traffic = Traffic()
    /// The deliveries counted, and the exactly-once and order checks.
    public var deliveries = Deliveries()
    /// The server's answers besides deliveries: `stored`, receipts, errors; frames not counted.
    public var answers = Answers()
    /// The heartbeats.
    public var heartbeats = Heartbeats()
    /// `--failover`: drops, reconnects, resends.
    public var failover = Failover()
    /// Connections that failed.
    public var failures = Failures()
    /// The latencies and how long the deliveries took.
    public var latencies = Latencies()
    /// The servers' memory and CPU, and this process's CPU.
    public var resources = Resources()
    /// Whether the drain ended with nothing outstanding.
    public var drained = false

    /// The users' logins.
    public struct Logins: Sendable {
        /// Users (probes not counted) whose login was accepted, and those whose connect or login failed.
        public var loggedIn = 0, loginFailures = 0
        /// The logins did not all end within the login timeout.
        public var loginTimedOut = false
        /// Seconds from the first user's connect to the last user's login answer.
        public var loginSeconds = 0.0
        /// Per user, from starting its connect to reading its login answer.
        public var loginLatency = LatencyHistogram()
    }

    /// The messages sent, by kind, and the probes' deliveries.
    public struct Traffic: Sendable {
        /// Messages sent, by kind.
        public var sentDirect = 0, sentBroadcast = 0, sentProbe = 0
        /// Probe messages expected and delivered.
        public var probeExpected = 0, probeDelivered = 0
    }

    /// The deliveries counted, and the exactly-once and order checks.
    public struct Deliveries: Sendable {
        /// Deliveries expected (of messages not refused) and counted (see ``DeliveryLedger``).
        public var expected = 0, delivered = 0
        /// Exactly-once and order checks: each must be 0.
        public var duplicates = 0, outOfOrder = 0, misdelivered = 0, unknownIDs = 0
        /// Messages a server error refused (by id).
        public var refused = 0
        /// Stored sessions: gaps in sequence numbers, and deliveries of a sequence number already read.
        public var gaps: UInt64 = 0, resentDeliveries = 0
        /// The sender's own messages delivered back to it (stored sessions).
        public var echoes = 0
        /// Deliveries from users not of this run (other runs, other clients), ignored.
        public var foreign = 0
        /// The first 10 messages with deliveries still missing at the end, one line each (run id, sender
        /// → recipient or room, whether it was acknowledged, and each recipient's position in the
        /// conversation): where to look when ``LoadResult/missing`` is not 0.
        public var undelivered: [String] = []
    }

    /// The server's answers besides deliveries: `stored`, receipts, errors; frames not counted.
    public struct Answers: Sendable {
        /// Version 2: `stored` answers (first ones) and numbered messages without one; repeated or unknown ones.
        public var acknowledged = 0, unacknowledged = 0, acknowledgementErrors = 0
        /// Deliveries to a connection the run does not count as logged in, and frames that make no sense after a login.
        public var unexpected = 0
        /// Frames skipped by function code (presence, presenceChanges, onlineUsers, history, newer codes).
        public var ignoredFrames = 0
        /// Receipts (✓✓) read.
        public var receipts = 0
        /// Server errors by code (`rateLimited`, `unknownRecipient`, …).
        public var errors: [String: Int] = [:]
    }

    /// The heartbeats.
    public struct Heartbeats: Sendable {
        /// Heartbeats sent, answered, and missed (not answered before the next one was due, or by the end).
        public var heartbeatsSent = 0, heartbeatsAnswered = 0, heartbeatsMissed = 0
        /// `--failover`: heartbeats left unanswered on connections that dropped (not counted as missed).
        public var heartbeatsLost = 0
    }

    /// `--failover`: drops, reconnects, resends.
    public struct Failover: Sendable {
        /// Connections that dropped after their login, connect attempts to log them in again, and users
        /// still away at the end (must be 0).
        public var drops = 0, reconnectAttempts = 0, usersAway = 0
        /// Attempts to log in again that failed (refused, reset, or no login answer within
        /// `--login-timeout` once connected), and the reasons of the first five.
        public var failedAttempts = 0, failedAttemptReasons: [String] = []
        /// Per drop, from reading it to reading the login answer on another connection.
        public var failoverLatency = LatencyHistogram()
        /// Messages resent from an outbox after a reconnect, and `storeUnavailable` answers that kept a
        /// message for the next reconnect (not counted as errors).
        public var messagesResent = 0, storeRefusals = 0
        /// Attempts answered `serverBusy` (too many logins waiting on that server): each tried again
        /// after its `retryAfter` plus up to 1 s of jitter (also counted in ``failedAttempts``).
        public var busyRefusals = 0
    }

    /// Connections that failed.
    public struct Failures: Sendable {
        /// Connections that failed (first few reasons) and how many.
        public var failureReasons: [String] = [], connectionFailures = 0
    }

    /// The latencies and how long the deliveries took.
    public struct Latencies: Sendable {
        /// Send → delivery of direct messages and broadcasts (all, and each kind), and of the probes' messages.
        public var deliveryLatency = LatencyHistogram(), directLatency = LatencyHistogram(), broadcastLatency = LatencyHistogram()
        public var probeLatency = LatencyHistogram()
        /// Seconds from the start of the messages to the last counted delivery, and to the last broadcast delivery.
        public var deliverySeconds = 0.0, broadcastSeconds = 0.0
    }

    /// The servers' memory and CPU, and this process's CPU.
    public struct Resources: Sendable {
        /// The servers' summed RSS before the users' logins, after them, and at the end (KiB), when `--server-pid` was given.
        public var serverRSSBefore: Int?, serverRSSAfterLogins: Int?, serverRSSEnd: Int?
        /// CPU seconds of the servers and of this process from the start of the messages to the end.
        public var serverCPUSeconds: Double?, clientCPUSeconds = 0.0
    }

    /// A result of `options` with nothing counted yet.
    public init(options: LoadOptions) { self.options = options }

    /// Expected deliveries that did not arrive.
    public var missing: Int { deliveries.expected - deliveries.delivered }
    /// Logins per second over the login phase.
    public var loginsPerSecond: Double { logins.loginSeconds > 0 ? Double(logins.loggedIn) / logins.loginSeconds : 0 }
    /// Deliveries (direct and broadcast) per second over the messages.
    public var deliveriesPerSecond: Double {
        latencies.deliverySeconds > 0 ? Double(latencies.deliveryLatency.count) / latencies.deliverySeconds : 0
    }
    /// Broadcast deliveries per second (fan-out) over the messages.
    public var broadcastDeliveriesPerSecond: Double {
        latencies.broadcastSeconds > 0 ? Double(latencies.broadcastLatency.count) / latencies.broadcastSeconds : 0
    }
    /// Server RSS per logged-in idle user in bytes: (after the logins − before) × 1024 ÷ users.
    public var rssPerUserBytes: Double? {
        guard let before = resources.serverRSSBefore, let after = resources.serverRSSAfterLogins, logins.loggedIn > 0 else { return nil }
        return Double(after - before) * 1024 / Double(logins.loggedIn)
    }
    /// Server CPU microseconds per delivery counted (probes included).
    public var serverCPUMicrosecondsPerDelivery: Double? {
        resources.serverCPUSeconds.map { deliveries.delivered > 0 ? $0 * 1e6 / Double(deliveries.delivered) : 0 }
    }
    /// Errors in all.
    public var errorCount: Int { answers.errors.values.reduce(0, +) }

    /// Every user logged in, every expected delivery arrived exactly once and in order, no error, no
    /// failure, no missed heartbeat; with `--failover`, every dropped user back (deliveries resent by
    /// the server after a reconnect are then allowed: a client drops them by sequence number).
    public var isClean: Bool {
        logins.loggedIn == options.users && !logins.loginTimedOut && missing == 0 && deliveries.duplicates == 0
            && deliveries.outOfOrder == 0 && deliveries.misdelivered == 0
            && deliveries.unknownIDs == 0 && deliveries.gaps == 0 && (deliveries.resentDeliveries == 0 || options.failover)
            && answers.unacknowledged == 0
            && answers.acknowledgementErrors == 0 && answers.unexpected == 0 && errorCount == 0 && failures.connectionFailures == 0
            && heartbeats.heartbeatsMissed == 0
            && failover.usersAway == 0
    }

    /// The result's fields in order, typed for JSON: the RESULT line and `--json` show the same.
    public var fields: [(key: String, value: ResultValue)] {
        func ms(_ histogram: LatencyHistogram, _ fraction: Double) -> ResultValue {
            .number(Double(histogram.percentile(fraction)) / 1e6, 3)
        }
        var fields: [(String, ResultValue)] = [
            ("mode", .text(options.modeName)), ("label", .text(options.label.isEmpty ? "-" : options.label)),
            ("servers", .text(options.servers.map(\.description).joined(separator: ","))),
            ("protocol", .text(options.protocolName)), ("users", .integer(options.users)),
            ("login_rate", .number(options.rates.loginRate, 1)), ("direct_rate", .number(options.rates.directRate, 1)),
            ("broadcast_rate", .number(options.rates.broadcastRate, 1)), ("probe_rate", .number(options.rates.probeRate, 1)),
            ("duration_s", .number(options.timing.duration, 1)), ("heartbeat_s", .number(options.timing.heartbeat, 1)),
            ("logged_in", .integer(logins.loggedIn)), ("login_failures", .integer(logins.loginFailures)),
            ("login_seconds", .number(logins.loginSeconds, 3)), ("logins_per_s", .number(loginsPerSecond, 0)),
            ("login_p50_ms", ms(logins.loginLatency, 0.5)), ("login_p99_ms", ms(logins.loginLatency, 0.99)),
            ("login_max_ms", .number(Double(logins.loginLatency.max) / 1e6, 3)),
            ("sent_direct", .integer(traffic.sentDirect)), ("sent_broadcast", .integer(traffic.sentBroadcast)),
            ("expected", .integer(deliveries.expected)), ("delivered", .integer(deliveries.delivered)), ("missing", .integer(missing)),
            ("duplicates", .integer(deliveries.duplicates)), ("out_of_order", .integer(deliveries.outOfOrder)),
            ("misdelivered", .integer(deliveries.misdelivered)), ("unknown_ids", .integer(deliveries.unknownIDs)),
            ("refused", .integer(deliveries.refused)),
            ("gaps", .integer(Int(deliveries.gaps))), ("resent", .integer(deliveries.resentDeliveries)),
            ("acknowledged", .integer(answers.acknowledged)), ("unacknowledged", .integer(answers.unacknowledged)),
            ("echoes", .integer(deliveries.echoes)), ("foreign", .integer(deliveries.foreign)),
            ("unexpected", .integer(answers.unexpected)),
            ("ignored_frames", .integer(answers.ignoredFrames)), ("errors", .integer(errorCount)),
            (
                "errors_by_code",
                .text(
                    answers.errors.isEmpty
                        ? "-" : answers.errors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))
            ),
            ("delivery_p50_ms", ms(latencies.deliveryLatency, 0.5)), ("delivery_p99_ms", ms(latencies.deliveryLatency, 0.99)),
            ("delivery_p999_ms", ms(latencies.deliveryLatency, 0.999)),
            ("delivery_max_ms", .number(Double(latencies.deliveryLatency.max) / 1e6, 3)),
            ("direct_p50_ms", ms(latencies.directLatency, 0.5)), ("direct_p99_ms", ms(latencies.directLatency, 0.99)),
            ("broadcast_p50_ms", ms(latencies.broadcastLatency, 0.5)), ("broadcast_p99_ms", ms(latencies.broadcastLatency, 0.99)),
            ("deliveries_per_s", .number(deliveriesPerSecond, 0)), ("broadcast_deliveries_per_s", .number(broadcastDeliveriesPerSecond, 0)),
            ("probe_sent", .integer(traffic.sentProbe)), ("probe_delivered", .integer(traffic.probeDelivered)),
            ("probe_p50_ms", ms(latencies.probeLatency, 0.5)), ("probe_p99_ms", ms(latencies.probeLatency, 0.99)),
            ("probe_max_ms", .number(Double(latencies.probeLatency.max) / 1e6, 3)),
            ("heartbeats_sent", .integer(heartbeats.heartbeatsSent)), ("heartbeats_answered", .integer(heartbeats.heartbeatsAnswered)),
            ("heartbeats_missed", .integer(heartbeats.heartbeatsMissed)), ("connection_failures", .integer(failures.connectionFailures)),
            ("drops", .integer(failover.drops)), ("reconnect_attempts", .integer(failover.reconnectAttempts)),
            ("users_away", .integer(failover.usersAway)),
            ("failed_attempts", .integer(failover.failedAttempts)), ("busy_refusals", .integer(failover.busyRefusals)),
            ("failover_p50_ms", ms(failover.failoverLatency, 0.5)), ("failover_p99_ms", ms(failover.failoverLatency, 0.99)),
            ("failover_max_ms", .number(Double(failover.failoverLatency.max) / 1e6, 3)),
            ("heartbeats_lost", .integer(heartbeats.heartbeatsLost)),
            ("messages_resent", .integer(failover.messagesResent)), ("store_refusals", .integer(failover.storeRefusals)),
            ("client_cpu_s", .number(resources.clientCPUSeconds, 2))
        ]
        if let before = resources.serverRSSBefore { fields.append(("server_rss_before_kib", .integer(before))) }
        if let after = resources.serverRSSAfterLogins { fields.append(("server_rss_after_logins_kib", .integer(after))) }
        if let end = resources.serverRSSEnd { fields.append(("server_rss_end_kib", .integer(end))) }
        if let perUser = rssPerUserBytes { fields.append(("rss_per_user_bytes", .number(perUser, 0))) }
        if let cpu = resources.serverCPUSeconds { fields.append(("server_cpu_s", .number(cpu, 2))) }
        if let perDelivery = serverCPUMicrosecondsPerDelivery { fields.append(("server_cpu_us_per_delivery", .number(perDelivery, 2))) }
        fields.append(("clean", .flag(isClean)))
        return fields
    }

    /// A few lines for people.
    public var summary: String {
        func ms(_ histogram: LatencyHistogram) -> String {
            "p50 \(Format.decimal(Double(histogram.percentile(0.5)) / 1e6, 2))  p99 \(Format.decimal(Double(histogram.percentile(0.99)) / 1e6, 2))"
                + "  p99.9 \(Format.decimal(Double(histogram.percentile(0.999)) / 1e6, 2))  max \(Format.decimal(Double(histogram.max) / 1e6, 2))"
                + "  (\(histogram.count))"
        }
        let o = options
        var lines = [
            "\(o.label.isEmpty ? "" : o.label + " ")\(o.modeName): \(o.users) users (\(o.protocolName)) on \(o.servers.count) server(s), "
                + "logins \(o.rates.loginRate > 0 ? Format.grouped(o.rates.loginRate) + "/s" : "all at once"), direct \(Format.grouped(o.rates.directRate))/s, "
                + "broadcast \(Format.grouped(o.rates.broadcastRate))/s for \(Format.decimal(o.timing.duration, 1)) s",
            "  logins: \(logins.loggedIn)/\(o.users) in \(Format.decimal(logins.loginSeconds, 3)) s = \(Format.grouped(loginsPerSecond))/s, ms \(ms(logins.loginLatency))"
                + (logins.loginTimedOut ? "  TIMED OUT" : ""),
            "  delivery ms: \(ms(latencies.deliveryLatency)); \(Format.grouped(deliveriesPerSecond)) deliveries/s",
            "    direct ms: \(ms(latencies.directLatency))",
            "    broadcast ms: \(ms(latencies.broadcastLatency)); fan-out \(Format.grouped(broadcastDeliveriesPerSecond)) deliveries/s",
            "  sent direct \(traffic.sentDirect), broadcast \(traffic.sentBroadcast); delivered \(deliveries.delivered)/\(deliveries.expected): missing \(missing), duplicates \(deliveries.duplicates), "
                + "out of order \(deliveries.outOfOrder), misdelivered \(deliveries.misdelivered), refused \(deliveries.refused), unexpected \(answers.unexpected)",
            "  heartbeats \(heartbeats.heartbeatsSent) sent, \(heartbeats.heartbeatsAnswered) answered, \(heartbeats.heartbeatsMissed) missed; ignored frames \(answers.ignoredFrames); "
                + "errors \(errorCount)\(answers.errors.isEmpty ? "" : " (" + answers.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")"
        ]
        if o.rates.probeRate > 0 {
            lines.insert("  probes: \(traffic.probeDelivered)/\(traffic.probeExpected) delivered, ms \(ms(latencies.probeLatency))", at: 5)
        }
        if o.version == .v2 {
            lines.append(
                "  acknowledged \(answers.acknowledged), unacknowledged \(answers.unacknowledged), echoes \(deliveries.echoes), gaps \(deliveries.gaps), resent \(deliveries.resentDeliveries)"
            )
        }
        if let before = resources.serverRSSBefore, let after = resources.serverRSSAfterLogins {
            lines.append(
                "  server RSS \(before) KiB before the logins, \(after) KiB after (\(Format.decimal(rssPerUserBytes ?? 0, 0)) B per user)"
                    + (resources.serverRSSEnd.map { ", \($0) KiB at the end" } ?? ""))
        }
        lines.append(
            "  client CPU \(Format.decimal(resources.clientCPUSeconds, 2)) s"
                + (resources.serverCPUSeconds.map {
                    " · server CPU \(Format.decimal($0, 2)) s, \(Format.decimal(serverCPUMicrosecondsPerDelivery ?? 0, 2)) µs per delivery"
                } ?? ""))
        if o.failover {
            lines.append(
                "  failover: \(failover.drops) drops, \(failover.reconnectAttempts) reconnect attempts, \(failover.usersAway) users away at the end, "
                    + "\(heartbeats.heartbeatsLost) heartbeats lost with their connections, \(failover.messagesResent) messages resent, "
                    + "\(failover.storeRefusals) storeUnavailable, \(failover.busyRefusals) serverBusy; "
                    + "drop → logged in again ms \(ms(failover.failoverLatency))")
            if failover.failedAttempts > 0 {
                lines.append(
                    "  failed attempts: \(failover.failedAttempts) (first: \(failover.failedAttemptReasons.joined(separator: "; ")))")
            }
        }
        if failures.connectionFailures > 0 {
            lines.append("  connection failures: \(failures.connectionFailures) (first: \(failures.failureReasons.first ?? "?"))")
        }
        if !deliveries.undelivered.isEmpty { lines.append("  undelivered: " + deliveries.undelivered.joined(separator: "; ")) }
        if !drained { lines.append("  NOT DRAINED: something was still outstanding at the end") }
        return lines.joined(separator: "\n")
    }
}

/// A value of a result field: how the RESULT line and the JSON object show it.
public enum ResultValue: Equatable, Sendable {
    case integer(Int)
    /// A number shown with this many decimals.
    case number(Double, Int)
    case text(String)
    /// `yes`/`no` on the RESULT line, `true`/`false` in JSON.
    case flag(Bool)

    /// As on the RESULT line.
    public var plain: String {
        switch self {
        case .integer(let value): return "\(value)"
        case .number(let value, let places): return Format.decimal(value, places)
        case .text(let text): return text
        case .flag(let flag): return flag ? "yes" : "no"
        }
    }

    /// As a JSON value.
    public var json: String {
        switch self {
        case .integer, .number: return plain
        case .flag(let flag): return flag ? "true" : "false"
        case .text(let text):
            var escaped = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case "\n": escaped += "\\n"
                case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "\""
        }
    }
}
