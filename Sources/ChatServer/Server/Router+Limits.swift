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
    /// The limits on one connection, the clock they are measured by, and the log of refusals.
    struct Limiting {
        let limits: ChatServer.Limits
        /// Monotonic time in nanoseconds (the event loops' clock, virtual in tests): for the rate limits
        /// and the log's repeat windows.
        let clock: @Sendable () -> UInt64
        /// Refusals logged once per offender.
        var offences = RepeatLog()
        var offenceSummaryScheduled = false
    }

    /// True when `message` from `session` is within its rate (``Pace/check(_:at:limits:)``); otherwise
    /// it has been answered `rateLimited` (with its id and `retryAfter` in version 2), not stored or
    /// delivered, and, beyond ``ChatServer/Limits/maxRefusedInARow`` refusals in a row, the connection
    /// is being closed (phase `closing`).
    func withinRate(_ message: ChatMessage, from session: Session) -> Bool {
        // Closing for its rate: what it still sends is not answered (nor stored: it stays with the client).
        if case .closing = sessions.phase(of: session) { return false }
        guard var pace = sessions.pace(of: session) else { return true }
        let now = limiting.clock()
        let verdict = pace.check(message, at: now, limits: limits)
        sessions.setPace(pace, of: session)
        guard case .refused(let retryAfter, let closes) = verdict else { return true }
        metrics.refused(.rateLimited)
        let who = name(of: session) ?? session.remoteAddress?.description ?? "?"
        let limits = self.limits
        if let line = limiting.offences.note(
            "rate limit: \(who) sends more than \(Router.decimal(limits.messageRate)) messages/s (burst \(limits.messageBurst)); messages refused",
            key: .init(source: "session \(session.id)", kind: "rate"), now: now)
        {
            logger.notice("\(line)")
            scheduleOffenceSummaries()
        }
        session.send(
            Router.error(
                .rateLimited,
                "more than \(Router.decimal(limits.messageRate)) messages a second (burst "
                    + "\(limits.messageBurst)); not sent; try again in \(retryAfter) s",
                id: ChatCodec().id(of: message), version: message.version, retryAfter: retryAfter))
        if closes {
            let why = "rate limit: more than \(limits.maxRefusedInARow) messages refused in a row"
            sessions.set(.closing(reason: why, name: name(of: session)), of: session)
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
        guard let first = limiting.offences.note(line, key: .init(source: source, kind: kind), now: limiting.clock()) else {
            scheduleOffenceSummaries()
            return
        }
        logger.log(level: level, "\(first)")
        scheduleOffenceSummaries()
    }

    /// Logs the summaries of repeated refusals once their interval has passed (on the routing queue).
    func scheduleOffenceSummaries() {
        guard !limiting.offenceSummaryScheduled, !limiting.offences.isEmpty else { return }
        limiting.offenceSummaryScheduled = true
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: limiting.offences.interval))) { [self] in
            limiting.offenceSummaryScheduled = false
            for line in limiting.offences.summaries(now: limiting.clock()) { logger.notice("\(line)") }
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
    func unsendable(_ message: ChatMessage, reason: String, to peers: [any ChatPeer]) {
        let names = peers.map { name(of: $0) ?? $0.remoteAddress?.description ?? "?" }
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

    // MARK: Shutdown

    /// The server is shutting down: messages arriving from now on are neither stored nor acknowledged
    /// (their clients resend them after reconnecting); what is pending is stored now, acknowledged and
    /// delivered before the clients are told. Returns how many messages this last group commit took.
    func beginShutdown() -> Int {
        assertOnQueue()
        shutdown = Shutdown()
        // The repeats counted so far are summed up now: the process is about to end.
        for line in limiting.offences.summaries(now: limiting.clock(), all: true) { logger.notice("\(line)") }
        let count = delivery.pendingMessages.count
        flush()
        return count
    }

    /// A message that arrived after the shutdown began: counted (``Shutdown/lateMessages``), not handled.
    func arrivedLate(_ message: ChatMessage) {
        switch message {
        case .directMessage, .broadcast, .v2(.directMessage), .v2(.broadcast): shutdown?.lateMessages += 1
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
