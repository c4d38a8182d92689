import AsyncSocket
import ChatProtocol
import Dispatch
import LongLink
import Synchronization

extension ChatServer {
    /// What one connection, and all of them, may do (issue 12; docs/PROTOCOL.md "Limits and refusals").
    /// Every refusal is an error frame the client can show, tied to the request it answers; each is
    /// logged once per offender, repeats summed up once a minute. `im-server` has a flag for each.
    public struct Limits: Sendable, Equatable, CustomStringConvertible {
        /// Connections open at once (`--max-connections`). One more is answered `serverFull` and closed;
        /// the others go on. Default ``ResourceLimits/defaultMaxConnections()`` when the value is made:
        /// 64 below the open-file soft limit, at most 10,000 (`im-server` raises its soft limit to the
        /// hard limit first).
        public var maxConnections: Int
        /// Messages per second one connection may send on average (`--rate`): direct messages,
        /// broadcasts, logins, history and who requests; not heartbeats, not `received`
        /// acknowledgements. Over it a message is answered `rateLimited` (with its `id` and `retryAfter`
        /// in version 2) and not stored or delivered. Default 20: far above a person typing, and above
        /// what `socket-bench client chat` sends per user with its defaults (1 message/s each).
        public var messageRate: Double = 20
        /// Messages one connection may send at once before the rate applies (`--burst`). Default 300:
        /// a version 2 client resending its whole window (256 unacknowledged messages) after a
        /// reconnect is not refused.
        public var messageBurst = 300
        /// `rateLimited` refusals in a row (none taken between) after which the connection is closed: a
        /// client that does not wait its `retryAfter`. Default 1,000 (more than a version 2 client's
        /// window of 256 in flight, which a well-behaved client can have refused at once).
        public var maxRefusedInARow = 1_000
        /// How long a connection may stay without a successful login (`--login-timeout`), heartbeats or
        /// not: then it is answered `loginTimeout` and closed. Default 10 s.
        public var loginTimeout: Duration = .seconds(10)
        /// How long a frame may take from its first byte to its last (`--frame-timeout`): a connection
        /// that sends a header and then stalls (slowloris) is answered `frameTimeout` and closed then,
        /// not kept until the idle timeout. Default 10 s.
        public var frameTimeout: Duration = .seconds(10)

        /// The defaults above.
        public init() {
            maxConnections = ResourceLimits.defaultMaxConnections()
        }

        /// "960 connections, 20 messages/s per connection (burst 300), login within 10 s, frames within 10 s".
        public var description: String {
            "\(maxConnections) connections, \(Router.decimal(messageRate)) messages/s per connection (burst \(messageBurst)), "
                + "login within \(ChatCodec.seconds(loginTimeout)) s, frames within \(ChatCodec.seconds(frameTimeout)) s"
        }
    }

    /// What a graceful shutdown did (``shutDown(timeout:completion:)``).
    public struct ShutdownSummary: Sendable, Equatable, CustomStringConvertible {
        /// Sessions told the server is going away (`serverShuttingDown`) before their close.
        public var sessionsTold: Int
        /// Messages stored, acknowledged and delivered by the last group commit, before the clients
        /// were told.
        public var messagesFlushed: Int
        /// Direct messages and broadcasts that arrived after the shutdown began: neither stored nor
        /// acknowledged, so their clients still hold them and resend them after reconnecting.
        public var messagesLeftToClients: Int

        /// "shutting down: 12 sessions told, 3 messages flushed" (and ", 2 messages arriving during the
        /// shutdown left to their clients" when there were some).
        public var description: String {
            func count(_ number: Int, _ word: String) -> String { "\(number) \(word)\(number == 1 ? "" : "s")" }
            let late =
                messagesLeftToClients == 0
                ? ""
                : ", \(count(messagesLeftToClients, "message")) arriving during the shutdown left to their clients"
            return "shutting down: \(count(sessionsTold, "session")) told, \(count(messagesFlushed, "message")) flushed" + late
        }
    }

    /// Shuts down gracefully (`im-server` on SIGINT or SIGTERM): stops accepting connections and
    /// answering discovery; stores, acknowledges and delivers what is pending (every message answered
    /// `stored` is in the store; what arrives from now on is not acknowledged, so its client resends it);
    /// tells every client `serverShuttingDown` and closes its connection once that is written; logs the
    /// ``ShutdownSummary`` and passes it to `completion`, on the server's queue, once every connection
    /// has closed or `timeout` (default 5 s) has passed. Call it once; ``stop()`` is not needed after it.
    public func shutDown(timeout: Duration = .seconds(5), completion: @escaping @Sendable (ShutdownSummary) -> Void) {
        accepting.store(false, ordering: .relaxed)
        stopTimers()
        link.stopAccepting()
        let router = self.router, link = self.link, logger = self.logger
        queue.async {
            let flushed = router.beginShutdown()
            let online = Array(router.users.keys)
            link.shutDown(timeout: timeout) { told in
                // The others see this node's users offline now, not when its key expires.
                router.cluster?.stop(removingPresence: true, users: online)
                let summary = ShutdownSummary(
                    sessionsTold: told, messagesFlushed: flushed,
                    messagesLeftToClients: router.shutdown?.lateMessages ?? 0)
                logger.notice("\(summary)")
                completion(summary)
            }
        }
    }
}
