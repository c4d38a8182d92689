import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import SocketLog

/// What one connection may do (issue 12; docs/PROTOCOL.md "Limits and refusals"): messages at most at
/// ``ChatServer/Limits/messageRate`` per second with bursts of ``ChatServer/Limits/messageBurst``
/// (a ``TokenBucket`` per connection), refused over it with `rateLimited` tied to the message; the
/// log lines of refusals, once per offender (``RepeatLog``); and the graceful shutdown's part here:
/// what is pending is stored before the clients are told.
extension Router {
    /// One connection's message rate.
    struct Pace {
        var bucket: TokenBucket
        /// Until when (clock ns) every message is refused once one was: so none is taken before an
        /// earlier one that was refused, and the order the client sent them in is the order stored.
        var refusingUntil: UInt64 = 0
        /// Messages refused since the last one taken.
        var refusedInARow = 0
    }

    /// Whether `message` counts against the connection's rate: everything a client sends except
    /// `received` acknowledgements, which the server's own deliveries bound (heartbeats never reach
    /// the router).
    static func countsAgainstRate(_ message: ChatMessage) -> Bool {
        if case .v2(.received) = message { return false }
        return true
    }

    /// True when `message` from `session` is within its rate; otherwise it has been answered
    /// `rateLimited` (with its id and `retryAfter` in version 2), not stored or delivered, and, beyond
    /// ``ChatServer/Limits/maxRefusedInARow`` refusals in a row, the connection is being closed.
    func withinRate(_ message: ChatMessage, from session: Session) -> Bool {
        // Closing for its rate: what it still sends is not answered (nor stored: it stays with the client).
        guard closing[session.id] == nil else { return false }
        guard Router.countsAgainstRate(message), var pace = paces[session.id] else { return true }
        let now = clock()
        let wait: UInt64
        if now >= pace.refusingUntil {
            guard case .refused(let retryAfter) = pace.bucket.take(at: now) else {
                pace.refusedInARow = 0
                paces[session.id] = pace
                return true
            }
            // Whole seconds on the wire, rounded up: after them the bucket has a token again.
            let seconds = max(1, (Router.nanoseconds(retryAfter) + 999_999_999) / 1_000_000_000)
            wait = seconds * 1_000_000_000
            pace.refusingUntil = now &+ wait
        } else {
            wait = pace.refusingUntil - now
        }
        pace.refusedInARow += 1
        paces[session.id] = pace
        let retryAfter = max(1, (wait + 999_999_999) / 1_000_000_000)
        let who = name(of: session) ?? session.remoteAddress?.description ?? "?"
        let limits = self.limits
        if let line = offences.note(
            "rate limit: \(who) sends more than \(Router.decimal(limits.messageRate)) messages/s (burst \(limits.messageBurst)); messages refused",
            key: .init(source: "session \(session.id)", kind: "rate"), now: now)
        {
            logger.notice("\(line)")
            scheduleOffenceSummaries()
        }
        let id = ChatCodec().id(of: message)
        session.send(
            Router.error(
                .rateLimited,
                "more than \(Router.decimal(limits.messageRate)) messages a second (burst "
                    + "\(limits.messageBurst)); not sent; try again in \(retryAfter) s",
                id: id, version: message.version, retryAfter: retryAfter))
        if pace.refusedInARow > limits.maxRefusedInARow, closing[session.id] == nil {
            let why = "rate limit: more than \(limits.maxRefusedInARow) messages refused in a row"
            closing[session.id] = why
            let farewell = Router.error(
                .rateLimited, "closing the connection: \(why)", id: nil, version: message.version,
                retryAfter: retryAfter)
            // After the group commit already scheduled: what was taken is acknowledged before the close.
            queue.async {
                session.send(farewell)
                session.close()
            }
        }
        return false
    }

    // MARK: Log lines of refusals

    /// Logs `line` at `level` if it is the first of `kind` from `source` within the interval; counts
    /// it otherwise (its summary comes at `notice`).
    func logOnce(_ line: String, level: Logger.Level = .notice, source: String, kind: String) {
        guard let first = offences.note(line, key: .init(source: source, kind: kind), now: clock()) else {
            scheduleOffenceSummaries()
            return
        }
        logger.log(level: level, "\(first)")
        scheduleOffenceSummaries()
    }

    /// Logs the summaries of repeated refusals once their interval has passed (on the routing queue).
    func scheduleOffenceSummaries() {
        guard !offenceSummaryScheduled, !offences.isEmpty else { return }
        offenceSummaryScheduled = true
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: offences.interval))) { [self] in
            offenceSummaryScheduled = false
            for line in offences.summaries(now: clock()) { logger.notice("\(line)") }
            scheduleOffenceSummaries()
        }
    }

    /// A connection refused before it became a session (`serverFull`), logged once per address.
    func refused(_ address: SocketAddress?, _ refusal: LinkRefusal) {
        let host = address?.host ?? "?"
        logOnce("refused connection from \(address?.description ?? "?") (\(refusal))", source: host, kind: "refused \(refusal)")
    }

    /// A session ended without a login (bad frames, timeouts, …): logged once per address and cause.
    func droppedBeforeLogin(_ session: Session, _ reason: LongLinkServer<ChatCodec>.CloseReason) {
        let host = session.remoteAddress?.host ?? "?"
        let kind: String
        switch reason {
        case .protocolError: kind = "protocol error"
        case .network: kind = "network"
        case .slowConsumer: kind = "slow consumer"
        default: kind = "\(reason)"
        }
        logOnce(
            "drop \(session.remoteAddress?.description ?? "?") (\(Router.describe(reason)))",
            level: kind == "protocol error" ? .warning : .info, source: host, kind: kind)
    }

    /// A close reason in the chat's words: LongLink's "admission timeout" is the chat's login timeout.
    static func describe(_ reason: LongLinkServer<ChatCodec>.CloseReason) -> String {
        reason == .admissionTimeout ? "login timeout" : "\(reason)"
    }

    /// A message that could not be encoded (LongLink's `sendFailed`): logged with its recipients; the
    /// sender of a delivery, if online, is told. (The text limit makes every delivery of an accepted
    /// text fit, so this is for what no check foresaw.)
    func unsendable(_ message: ChatMessage, reason: String, to sessions: [LongLinkServer<ChatCodec>.Session]) {
        let names = sessions.map { name(of: $0) ?? $0.remoteAddress?.description ?? "?" }
        let listed = names.prefix(5).joined(separator: ", ") + (names.count > 5 ? " and \(names.count - 5) more" : "")
        logger.warning("not sent to \(listed): \(message) (\(reason))")
        let sender: String
        switch message {
        case .delivery(let from, _, _), .v2(.delivery(let from, _, _, _, _, _)): sender = from
        default: return
        }
        guard let user = users[sender] else { return }
        user.session.send(
            Router.error(
                .badRequest, "your message could not be delivered to \(listed): \(reason)", id: nil,
                version: user.version))
    }

    /// The session's rate state goes; a summary of its refusals, if any were only counted.
    func forgetLimits(of session: Session) {
        paces[session.id] = nil
        closing[session.id] = nil
        for line in offences.close(source: "session \(session.id)", now: clock()) { logger.notice("\(line)") }
    }

    // MARK: Shutdown

    /// The server is shutting down: messages arriving from now on are neither stored nor acknowledged
    /// (their clients resend them after reconnecting); what is pending is stored now, acknowledged and
    /// delivered before the clients are told. Returns how many messages this last group commit took.
    func beginShutdown() -> Int {
        shuttingDown = true
        // The repeats counted so far are summed up now: the process is about to end.
        for line in offences.summaries(now: clock(), all: true) { logger.notice("\(line)") }
        let count = pendingMessages.count
        flush()
        return count
    }

    /// A message that arrived after the shutdown began: counted (``lateMessages``), not handled.
    func arrivedLate(_ message: ChatMessage) {
        switch message {
        case .directMessage, .broadcast, .v2(.directMessage), .v2(.broadcast): lateMessages += 1
        default: break
        }
    }

    /// Whole nanoseconds of `duration`, 0 for a negative one.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// "20", "0.5".
    static func decimal(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
