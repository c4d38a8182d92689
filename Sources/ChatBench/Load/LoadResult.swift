import Foundation
import SocketBench

/// The figures of one `socket-bench client chat` load or crowd run (``LoadRun``). Latencies are
/// nanoseconds in ``LatencyHistogram``s (reported in milliseconds); memory in KiB.
public struct LoadResult: Sendable {
    /// What was run.
    public var options: LoadOptions
    /// Users (probes not counted) whose login was accepted, and those whose connect or login failed.
    public var loggedIn = 0, loginFailures = 0
    /// The logins did not all end within the login timeout.
    public var loginTimedOut = false
    /// Seconds from the first user's connect to the last user's login answer.
    public var loginSeconds = 0.0
    /// Per user, from starting its connect to reading its login answer.
    public var loginLatency = LatencyHistogram()
    /// Messages sent, by kind.
    public var sentDirect = 0, sentBroadcast = 0, sentProbe = 0
    /// Deliveries expected (of messages not refused) and counted (see ``DeliveryLedger``).
    public var expected = 0, delivered = 0
    /// Exactly-once and order checks: each must be 0.
    public var duplicates = 0, outOfOrder = 0, misdelivered = 0, unknownIDs = 0
    /// Messages a server error refused (by id).
    public var refused = 0
    /// Stored sessions: gaps in sequence numbers, and deliveries of a sequence number already read.
    public var gaps: UInt64 = 0, resentDeliveries = 0
    /// Version 2: `stored` answers (first ones) and numbered messages without one; repeated or unknown ones.
    public var acknowledged = 0, unacknowledged = 0, acknowledgementErrors = 0
    /// The sender's own messages delivered back to it (stored sessions).
    public var echoes = 0
    /// Deliveries from users not of this run (other runs, other clients), ignored.
    public var foreign = 0
    /// Deliveries to a connection the run does not count as logged in, and frames that make no sense after a login.
    public var unexpected = 0
    /// Frames skipped by function code (presence, presenceChanges, onlineUsers, history, newer codes).
    public var ignoredFrames = 0
    /// Receipts (✓✓) read.
    public var receipts = 0
    /// Server errors by code (`rateLimited`, `unknownRecipient`, …).
    public var errors: [String: Int] = [:]
    /// Heartbeats sent, answered, and missed (not answered before the next one was due, or by the end).
    public var heartbeatsSent = 0, heartbeatsAnswered = 0, heartbeatsMissed = 0
    /// `--failover`: connections that dropped after their login, connect attempts to log them in
    /// again, and users still away at the end (must be 0).
    public var drops = 0, reconnectAttempts = 0, usersAway = 0
    /// `--failover`: attempts to log in again that failed (refused, reset, or no login answer within
    /// `--login-timeout` once connected), and the reasons of the first five.
    public var failedAttempts = 0, failedAttemptReasons: [String] = []
    /// `--failover`: per drop, from reading it to reading the login answer on another connection.
    public var failoverLatency = LatencyHistogram()
    /// `--failover`: heartbeats left unanswered on connections that dropped (not counted as missed).
    public var heartbeatsLost = 0
    /// `--failover`: messages resent from an outbox after a reconnect, and `storeUnavailable` answers
    /// that kept a message for the next reconnect (not counted as errors).
    public var messagesResent = 0, storeRefusals = 0
    /// Connections that failed (first few reasons) and how many.
    public var failureReasons: [String] = [], connectionFailures = 0
    /// The first 10 messages with deliveries still missing at the end, one line each (run id, sender
    /// → recipient or room, whether it was acknowledged, and each recipient's position in the
    /// conversation): where to look when ``missing`` is not 0.
    public var undelivered: [String] = []
    /// Send → delivery of direct messages and broadcasts (all, and each kind), and of the probes' messages.
    public var deliveryLatency = LatencyHistogram(), directLatency = LatencyHistogram(), broadcastLatency = LatencyHistogram()
    public var probeLatency = LatencyHistogram()
    /// Probe messages expected and delivered.
    public var probeExpected = 0, probeDelivered = 0
    /// Seconds from the start of the messages to the last counted delivery, and to the last broadcast delivery.
    public var deliverySeconds = 0.0, broadcastSeconds = 0.0
    /// The servers' summed RSS before the users' logins, after them, and at the end (KiB), when `--server-pid` was given.
    public var serverRSSBefore: Int?, serverRSSAfterLogins: Int?, serverRSSEnd: Int?
    /// CPU seconds of the servers and of this process from the start of the messages to the end.
    public var serverCPUSeconds: Double?, clientCPUSeconds = 0.0
    /// Whether the drain ended with nothing outstanding.
    public var drained = false

    /// A result of `options` with nothing counted yet.
    public init(options: LoadOptions) { self.options = options }

    /// Expected deliveries that did not arrive.
    public var missing: Int { expected - delivered }
    /// Logins per second over the login phase.
    public var loginsPerSecond: Double { loginSeconds > 0 ? Double(loggedIn) / loginSeconds : 0 }
    /// Deliveries (direct and broadcast) per second over the messages.
    public var deliveriesPerSecond: Double { deliverySeconds > 0 ? Double(deliveryLatency.count) / deliverySeconds : 0 }
    /// Broadcast deliveries per second (fan-out) over the messages.
    public var broadcastDeliveriesPerSecond: Double { broadcastSeconds > 0 ? Double(broadcastLatency.count) / broadcastSeconds : 0 }
    /// Server RSS per logged-in idle user in bytes: (after the logins − before) × 1024 ÷ users.
    public var rssPerUserBytes: Double? {
        guard let before = serverRSSBefore, let after = serverRSSAfterLogins, loggedIn > 0 else { return nil }
        return Double(after - before) * 1024 / Double(loggedIn)
    }
    /// Server CPU microseconds per delivery counted (probes included).
    public var serverCPUMicrosecondsPerDelivery: Double? {
        serverCPUSeconds.map { delivered > 0 ? $0 * 1e6 / Double(delivered) : 0 }
    }
    /// Errors in all.
    public var errorCount: Int { errors.values.reduce(0, +) }

    /// Every user logged in, every expected delivery arrived exactly once and in order, no error, no
    /// failure, no missed heartbeat; with `--failover`, every dropped user back (deliveries resent by
    /// the server after a reconnect are then allowed: a client drops them by sequence number).
    public var isClean: Bool {
        loggedIn == options.users && !loginTimedOut && missing == 0 && duplicates == 0 && outOfOrder == 0 && misdelivered == 0
            && unknownIDs == 0 && gaps == 0 && (resentDeliveries == 0 || options.failover) && unacknowledged == 0
            && acknowledgementErrors == 0 && unexpected == 0 && errorCount == 0 && connectionFailures == 0 && heartbeatsMissed == 0
            && usersAway == 0
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
            ("login_rate", .number(options.loginRate, 1)), ("direct_rate", .number(options.directRate, 1)),
            ("broadcast_rate", .number(options.broadcastRate, 1)), ("probe_rate", .number(options.probeRate, 1)),
            ("duration_s", .number(options.duration, 1)), ("heartbeat_s", .number(options.heartbeat, 1)),
            ("logged_in", .integer(loggedIn)), ("login_failures", .integer(loginFailures)),
            ("login_seconds", .number(loginSeconds, 3)), ("logins_per_s", .number(loginsPerSecond, 0)),
            ("login_p50_ms", ms(loginLatency, 0.5)), ("login_p99_ms", ms(loginLatency, 0.99)),
            ("login_max_ms", .number(Double(loginLatency.max) / 1e6, 3)),
            ("sent_direct", .integer(sentDirect)), ("sent_broadcast", .integer(sentBroadcast)),
            ("expected", .integer(expected)), ("delivered", .integer(delivered)), ("missing", .integer(missing)),
            ("duplicates", .integer(duplicates)), ("out_of_order", .integer(outOfOrder)),
            ("misdelivered", .integer(misdelivered)), ("unknown_ids", .integer(unknownIDs)), ("refused", .integer(refused)),
            ("gaps", .integer(Int(gaps))), ("resent", .integer(resentDeliveries)),
            ("acknowledged", .integer(acknowledged)), ("unacknowledged", .integer(unacknowledged)),
            ("echoes", .integer(echoes)), ("foreign", .integer(foreign)), ("unexpected", .integer(unexpected)),
            ("ignored_frames", .integer(ignoredFrames)), ("errors", .integer(errorCount)),
            (
                "errors_by_code",
                .text(errors.isEmpty ? "-" : errors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))
            ),
            ("delivery_p50_ms", ms(deliveryLatency, 0.5)), ("delivery_p99_ms", ms(deliveryLatency, 0.99)),
            ("delivery_p999_ms", ms(deliveryLatency, 0.999)), ("delivery_max_ms", .number(Double(deliveryLatency.max) / 1e6, 3)),
            ("direct_p50_ms", ms(directLatency, 0.5)), ("direct_p99_ms", ms(directLatency, 0.99)),
            ("broadcast_p50_ms", ms(broadcastLatency, 0.5)), ("broadcast_p99_ms", ms(broadcastLatency, 0.99)),
            ("deliveries_per_s", .number(deliveriesPerSecond, 0)), ("broadcast_deliveries_per_s", .number(broadcastDeliveriesPerSecond, 0)),
            ("probe_sent", .integer(sentProbe)), ("probe_delivered", .integer(probeDelivered)),
            ("probe_p50_ms", ms(probeLatency, 0.5)), ("probe_p99_ms", ms(probeLatency, 0.99)),
            ("probe_max_ms", .number(Double(probeLatency.max) / 1e6, 3)),
            ("heartbeats_sent", .integer(heartbeatsSent)), ("heartbeats_answered", .integer(heartbeatsAnswered)),
            ("heartbeats_missed", .integer(heartbeatsMissed)), ("connection_failures", .integer(connectionFailures)),
            ("drops", .integer(drops)), ("reconnect_attempts", .integer(reconnectAttempts)), ("users_away", .integer(usersAway)),
            ("failed_attempts", .integer(failedAttempts)),
            ("failover_p50_ms", ms(failoverLatency, 0.5)), ("failover_p99_ms", ms(failoverLatency, 0.99)),
            ("failover_max_ms", .number(Double(failoverLatency.max) / 1e6, 3)), ("heartbeats_lost", .integer(heartbeatsLost)),
            ("messages_resent", .integer(messagesResent)), ("store_refusals", .integer(storeRefusals)),
            ("client_cpu_s", .number(clientCPUSeconds, 2))
        ]
        if let before = serverRSSBefore { fields.append(("server_rss_before_kib", .integer(before))) }
        if let after = serverRSSAfterLogins { fields.append(("server_rss_after_logins_kib", .integer(after))) }
        if let end = serverRSSEnd { fields.append(("server_rss_end_kib", .integer(end))) }
        if let perUser = rssPerUserBytes { fields.append(("rss_per_user_bytes", .number(perUser, 0))) }
        if let cpu = serverCPUSeconds { fields.append(("server_cpu_s", .number(cpu, 2))) }
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
                + "logins \(o.loginRate > 0 ? Format.grouped(o.loginRate) + "/s" : "all at once"), direct \(Format.grouped(o.directRate))/s, "
                + "broadcast \(Format.grouped(o.broadcastRate))/s for \(Format.decimal(o.duration, 1)) s",
            "  logins: \(loggedIn)/\(o.users) in \(Format.decimal(loginSeconds, 3)) s = \(Format.grouped(loginsPerSecond))/s, ms \(ms(loginLatency))"
                + (loginTimedOut ? "  TIMED OUT" : ""),
            "  delivery ms: \(ms(deliveryLatency)); \(Format.grouped(deliveriesPerSecond)) deliveries/s",
            "    direct ms: \(ms(directLatency))",
            "    broadcast ms: \(ms(broadcastLatency)); fan-out \(Format.grouped(broadcastDeliveriesPerSecond)) deliveries/s",
            "  sent direct \(sentDirect), broadcast \(sentBroadcast); delivered \(delivered)/\(expected): missing \(missing), duplicates \(duplicates), "
                + "out of order \(outOfOrder), misdelivered \(misdelivered), refused \(refused), unexpected \(unexpected)",
            "  heartbeats \(heartbeatsSent) sent, \(heartbeatsAnswered) answered, \(heartbeatsMissed) missed; ignored frames \(ignoredFrames); "
                + "errors \(errorCount)\(errors.isEmpty ? "" : " (" + errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")"
        ]
        if o.probeRate > 0 { lines.insert("  probes: \(probeDelivered)/\(probeExpected) delivered, ms \(ms(probeLatency))", at: 5) }
        if o.version == .v2 {
            lines.append(
                "  acknowledged \(acknowledged), unacknowledged \(unacknowledged), echoes \(echoes), gaps \(gaps), resent \(resentDeliveries)"
            )
        }
        if let before = serverRSSBefore, let after = serverRSSAfterLogins {
            lines.append(
                "  server RSS \(before) KiB before the logins, \(after) KiB after (\(Format.decimal(rssPerUserBytes ?? 0, 0)) B per user)"
                    + (serverRSSEnd.map { ", \($0) KiB at the end" } ?? ""))
        }
        lines.append(
            "  client CPU \(Format.decimal(clientCPUSeconds, 2)) s"
                + (serverCPUSeconds.map {
                    " · server CPU \(Format.decimal($0, 2)) s, \(Format.decimal(serverCPUMicrosecondsPerDelivery ?? 0, 2)) µs per delivery"
                } ?? ""))
        if o.failover {
            lines.append(
                "  failover: \(drops) drops, \(reconnectAttempts) reconnect attempts, \(usersAway) users away at the end, "
                    + "\(heartbeatsLost) heartbeats lost with their connections, \(messagesResent) messages resent, "
                    + "\(storeRefusals) storeUnavailable; drop → logged in again ms \(ms(failoverLatency))")
            if failedAttempts > 0 {
                lines.append("  failed attempts: \(failedAttempts) (first: \(failedAttemptReasons.joined(separator: "; ")))")
            }
        }
        if connectionFailures > 0 { lines.append("  connection failures: \(connectionFailures) (first: \(failureReasons.first ?? "?"))") }
        if !undelivered.isEmpty { lines.append("  undelivered: " + undelivered.joined(separator: "; ")) }
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
