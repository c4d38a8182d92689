import AsyncSocket
import Foundation

extension LongLinkClient {
    /// Where to connect and how to keep the link alive. Every default is the articles' value.
    public struct Configuration: Sendable {
        /// The servers to connect to, in order of preference: the nodes of one service, any of which
        /// will do. ``LongLinkClient/connect()`` tries the first; after a failed connect or a drop the
        /// link did not ask for, each reconnect attempt goes to the next one in the list, round robin
        /// (after the last, the first again), on the ``reconnectSchedule``'s timing. Each attempt
        /// tries every address its host resolves to (Happy Eyeballs, as
        /// `TCPSocket/connect(toHost:onPort:viaInterface:withTimeout:)` does). Must not be empty:
        /// with no endpoint, ``LongLinkClient/connect()`` reports ``Event/connectFailed(_:)`` with
        /// `SocketError/badConfig(_:)` and then ``Event/serverUnavailable``.
        public var endpoints: [Endpoint]
        /// The first endpoint's host name or numeric address (`""` when ``endpoints`` is empty).
        /// Setting it changes the first endpoint only (creating it, with port 0, when there is none).
        public var host: String {
            get { endpoints.first?.host ?? "" }
            set {
                if endpoints.isEmpty { endpoints = [Endpoint(host: newValue, port: 0)] } else { endpoints[0].host = newValue }
            }
        }
        /// The first endpoint's TCP port (0 when ``endpoints`` is empty). Setting it changes the first
        /// endpoint only (creating it, with host `""`, when there is none).
        public var port: UInt16 {
            get { endpoints.first?.port ?? 0 }
            set {
                if endpoints.isEmpty { endpoints = [Endpoint(host: "", port: newValue)] } else { endpoints[0].port = newValue }
            }
        }
        /// Seconds allowed for each connect, name resolution included. Default 20 s (article 002).
        public var connectTimeout: TimeInterval = 20
        /// Time between heartbeats while connected. Default 180 s, the articles' three minutes, which
        /// keeps carrier NAT mappings alive (MISSION M4).
        public var heartbeatInterval: Duration {
            get { heartbeat.interval }
            set { heartbeat.interval = newValue }
        }
        /// How long after a heartbeat, with nothing at all received from the server since, the link
        /// counts as dead and is dropped with ``DisconnectReason/heartbeatTimeout``. Any whole message
        /// counts, not only the acknowledgement: a server still answering a backlog that arrived before
        /// the heartbeat is alive. `nil` (the default) means one ``heartbeatInterval``. While the
        /// greeting (a login) is unanswered, it is at least ``connectTimeout``: the server answers the
        /// heartbeats behind a login after it, and a login can take it seconds.
        public var heartbeatAckTimeout: Duration? {
            get { heartbeat.ackTimeout }
            set { heartbeat.ackTimeout = newValue }
        }
        /// The adaptive heartbeat: instead of every ``heartbeatInterval``, a heartbeat after the link
        /// has been idle for an interval learned per network, just under the NAT's idle timeout, and a
        /// reconnect at once when the network changes (``SmartHeartbeat``, after WeChat's Mars). With
        /// it, ``heartbeatAckTimeout`` defaults to ``SmartHeartbeat/acknowledgementTimeout`` (30 s).
        /// `nil` (the default): the fixed ``heartbeatInterval``.
        public var smartHeartbeat: SmartHeartbeat? {
            get { heartbeat.smart }
            set { heartbeat.smart = newValue }
        }
        /// When to retry after an unrequested drop or a failed connect, and when to give up. Default
        /// ``ReconnectSchedule/init(delays:jitter:random:)`` with its defaults: three attempts after
        /// 0 s, 2 s and 4 s (article 000), each stretched by a random jitter in [0 s, 1 s), so the
        /// attempts come in [0 s, 1 s), [2 s, 3 s) and [4 s, 5 s). The schedule's ``ReconnectSchedule/random``
        /// is called on the link's event loop.
        public var reconnectSchedule = ReconnectSchedule()
        /// The base delays (before jitter) of ``reconnectSchedule``, one per attempt. Default 0 s, 2 s,
        /// 4 s. Setting it gives the schedule these fixed delays and keeps its jitter and randomness.
        public var reconnectDelays: [Duration] {
            get { reconnectSchedule.delays }
            set { reconnectSchedule.growth = .fixed(newValue) }
        }
        /// What follows the last attempt of ``reconnectSchedule``: ``ReconnectPolicy/giveUp`` (report
        /// ``Event/serverUnavailable`` and stop) or ``ReconnectPolicy/keepTrying(cap:)`` (report
        /// ``Event/serverUnavailable`` once, then keep retrying with doubling delays, at most `cap` plus
        /// jitter, each announced by ``Event/reconnecting(attempt:delay:endpoint:)``, until the app calls
        /// ``LongLinkClient/disconnect()``). Replaces the schedule's own ``ReconnectSchedule/policy``.
        /// `nil` (the default) chooses by the kind of link: the schedule's policy (``ReconnectPolicy/giveUp``
        /// unless set) for a plain link, `.keepTrying(cap: 60 s)` for a link with reliable delivery
        /// (issue 11: "reconnect never gives up on its own").
        public var reconnectPolicy: ReconnectPolicy?
        /// How long a connection must stay up before it counts as healthy and the reconnect schedule
        /// starts over (the next unrequested drop retries from attempt 1). A connection that drops
        /// sooner continues the schedule: a server that accepts, sends a message and closes is
        /// retried after 0 s, 2 s, 4 s (plus jitter) and then reported unavailable, not reconnected to
        /// in a tight loop. Measured from the moment the connection is established. `nil` (the
        /// default) means one ``heartbeatInterval`` (180 s by default): a link counts as healthy once
        /// it has lived to send its first heartbeat. `.zero` or less resets at every connect.
        public var linkHealthyAfter: Duration?
        /// TLS on every connection (`TCPSocket/startTLS(_:)` with these client settings, right after
        /// the connect: the greeting and everything after it go encrypted). A reconnect handshakes
        /// again, resuming the last session with that endpoint when the server allows it. A `nil`
        /// `TLSConfiguration/peerName` (on a client's settings) becomes the host of the endpoint
        /// connected to, for each connection (as `TCPConnection/connect(toHost:port:timeout:tls:options:group:)`
        /// makes it the host): each node of a service is verified under its own name. A peer name set
        /// here is used for every endpoint. A TLS failure (an untrusted certificate, a certificate
        /// that does not name the endpoint, say) ends the connection as any drop does, with
        /// `SocketError/tls(_:)` as the reason, and the next attempt goes to the next endpoint.
        /// `nil` (the default): plaintext.
        public var tls: TLSConfiguration?
        /// Messages kept while disconnected, sent in order after the next connect. Beyond this, ``send(_:)``
        /// fails with ``SendFailure/queueFull``. Default 1,000 messages.
        public var offlineQueueLimit = 1000
        /// Reliable delivery only: the most messages the outbox holds (sent or waiting, not yet stored by
        /// the server). Beyond this, ``LongLinkClient/send(_:)`` fails with ``SendFailure/outboxFull``.
        /// Default 10,000 messages (issue 11's bound).
        public var outboxLimit: Int {
            get { delivery.outboxLimit }
            set { delivery.outboxLimit = newValue }
        }
        /// Reliable delivery only: the most outbox messages written on one connection and not yet
        /// answered by the server; the others wait for answers. This also bounds the resend burst after a
        /// reconnect. Default 256 messages (issue 11's bound).
        public var unacknowledgedWindow: Int {
            get { delivery.unacknowledgedWindow }
            set { delivery.unacknowledgedWindow = newValue }
        }
        /// Reliable delivery only: also pass each answer that stores an outbox message (the codec's
        /// ``DeliveryRole/stored(id:)``) to the app as ``Event/received(_:)``, just before its
        /// ``Event/stored(id:_:)``, for apps that need what the answer says besides the id (the chat
        /// client needs its conversation and sequence number, to match receipts and its own messages
        /// echoed back). Answers for ids no longer in the outbox (repeats) are not passed on either way.
        /// Default `false`: only ``Event/stored(id:_:)`` is reported.
        public var reportsStoredAnswers: Bool {
            get { delivery.reportsStoredAnswers }
            set { delivery.reportsStoredAnswers = newValue }
        }
        /// Bytes that may wait in the socket to be written. Beyond this (the server or the network is
        /// slower than the app), new messages wait in the offline queue until half of it has drained.
        /// Default 4 MiB.
        public var maxQueuedBytes = 4 << 20
        /// How long ``LongLinkClient/disconnectAfterSending()`` waits for the server to acknowledge
        /// its final heartbeat before closing anyway. Default 5 s.
        public var drainTimeout: Duration = .seconds(5)

        /// The heartbeat's settings, kept together.
        private var heartbeat = LinkHeartbeatSettings()
        /// Reliable delivery's settings, kept together.
        private var delivery = LinkDeliverySettings()

        /// A configuration for the one server at `host` and `port` with the articles' defaults.
        public init(host: String, port: UInt16) {
            self.init(endpoints: [Endpoint(host: host, port: port)])
        }

        /// A configuration for `endpoints` (see ``endpoints``: tried in order, then round robin; must
        /// not be empty) with the articles' defaults.
        public init(endpoints: [Endpoint]) {
            self.endpoints = endpoints
        }
    }

    /// Why an established connection ended (MISSION M5: "the cause of a drop is visible to the app").
    public enum DisconnectReason: Sendable, Equatable, CustomStringConvertible {
        /// The app called ``LongLinkClient/disconnect()`` or ``LongLinkClient/disconnectAfterSending()``. No reconnect follows.
        case byUser
        /// The server closed the connection cleanly (end of file).
        case byServer
        /// The network or the peer broke the connection: reset, unreachable, timed out in the kernel.
        case network(SocketError)
        /// Nothing arrived for ``Configuration/heartbeatAckTimeout`` after a heartbeat.
        case heartbeatTimeout
        /// The server sent bytes that are not a valid frame or message.
        case protocolError(String)
        /// Reliable delivery: a delivery numbered `received` came in `conversation` while `expected` was
        /// due. It was not passed on; the link reconnects, and the next greeting's positions make the
        /// server resend from `expected`.
        case deliveryGap(conversation: String, expected: UInt64, received: UInt64)
        /// The network changed (``LongLinkClient/networkDidChange()``, or with a ``SmartHeartbeat`` a
        /// routing change that gave another network identifier): the link dropped the connection made
        /// over the old one and reconnects at once.
        case networkChanged

        public var description: String {
            switch self {
            case .networkChanged: return "network changed"
            case .byUser: return "by user"
            case .byServer: return "by server"
            case .network(let error): return "by network: \(error)"
            case .heartbeatTimeout: return "heartbeat timeout"
            case .protocolError(let why): return "protocol error: \(why)"
            case .deliveryGap(let conversation, let expected, let received):
                return "delivery gap in \(conversation): expected \(expected), received \(received)"
            }
        }
    }

    /// Why a message given to ``LongLinkClient/send(_:)`` will not be sent.
    public enum SendFailure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The offline queue already holds ``Configuration/offlineQueueLimit`` messages.
        case queueFull
        /// The codec could not encode the message; carries the codec's error text.
        case encodingFailed(String)
        /// The link stopped for good (server unavailable, or disconnected after sending) with the message unsent.
        case linkClosed
        /// Reliable delivery: the outbox already holds ``Configuration/outboxLimit`` messages.
        case outboxFull
        /// Reliable delivery: the ``DeliveryStateStore`` could not persist the message; carries its
        /// error text. The message is not sent.
        case storeFailed(String)

        public var description: String {
            switch self {
            case .queueFull: return "offline queue full"
            case .encodingFailed(let why): return "cannot encode: \(why)"
            case .linkClosed: return "link closed"
            case .outboxFull: return "outbox full"
            case .storeFailed(let why): return "cannot persist: \(why)"
            }
        }
    }

    /// Everything the link tells the app, in order.
    public enum Event: Sendable, CustomStringConvertible {
        /// Connected (first time or again) to the server at `host` and `port`: the numeric address
        /// actually connected to (of the endpoint this attempt went to; of the name's addresses, the
        /// one that answered first) and that endpoint's port.
        case connected(host: String, port: UInt16)
        /// With ``Configuration/tls``: the connection's TLS handshake is done and the server verified,
        /// with `protocolVersion` ("TLSv1.3"); `isSessionReused` when a reconnect resumed the session of
        /// the connection before (no certificate exchange, one round trip less). After ``connected(host:port:)``.
        case secured(protocolVersion: String, isSessionReused: Bool)
        /// A connect attempt failed with `error`.
        case connectFailed(SocketError)
        /// An established connection ended for `reason`.
        case disconnected(DisconnectReason)
        /// Attempt number `attempt` (from 1) will start after `delay`: the schedule's base delay plus
        /// its jitter (``ReconnectSchedule``); by default attempt 2 waits at least 2 s and less than 3 s.
        /// `endpoint`: where the attempt will go (the endpoint after the one tried last, round robin)
        /// when ``Configuration/endpoints`` lists more than one; `nil` with a single endpoint, where
        /// every attempt goes to the same server.
        case reconnecting(attempt: Int, delay: Duration, endpoint: Endpoint? = nil)
        /// The reconnect schedule's attempts all failed. With ``ReconnectPolicy/giveUp`` the link stops
        /// until ``LongLinkClient/connect()`` is called again; with ``ReconnectPolicy/keepTrying(cap:)``
        /// (reported once per outage) a ``reconnecting(attempt:delay:endpoint:)`` follows and retrying goes on.
        case serverUnavailable
        /// A message from the server (never a heartbeat acknowledgement). With reliable delivery each
        /// delivery arrives once, in order per conversation (duplicates and early ones are not passed on),
        /// and the codec's ``DeliveryRole/stored(id:)`` answers are reported as ``stored(id:_:)`` instead
        /// (as well, just before it, with ``Configuration/reportsStoredAnswers``).
        case received(Codec.Message)
        /// Reliable delivery: the server has stored the message numbered `id` (as sent, with its id), or
        /// found it already stored; it has left the outbox and will not be resent.
        case stored(id: UInt64, Codec.Message)
        /// Reliable delivery: the server refused the message numbered `id` for good (its answer arrived
        /// just before as ``received(_:)``); it has left the outbox and will not be resent.
        case refused(id: UInt64, Codec.Message)
        /// `message` will not be sent, for `reason`.
        case sendFailed(Codec.Message, SendFailure)
        /// ``Configuration/smartHeartbeat``: the heartbeat sent after `interval` idle was answered
        /// (`succeeded`), or was not within the acknowledgement timeout or the connection died first.
        case heartbeatProbe(interval: Duration, succeeded: Bool)
        /// ``Configuration/smartHeartbeat``: heartbeats now go after `to` idle instead of `from`, for `reason`.
        case heartbeatIntervalChanged(from: Duration, to: Duration, reason: SmartHeartbeat.ChangeReason)
        /// The network changed from `from` to `to` (``SmartHeartbeat/networkIdentifier``'s values;
        /// both `nil` when the app reported it on a link without a smart heartbeat). A
        /// ``disconnected(_:)`` with ``DisconnectReason/networkChanged`` and an immediate reconnect
        /// follow when the link was connected or connecting.
        case networkChanged(from: String?, to: String?)

        /// One line for logs: "connected to 127.0.0.1:7000" ("[::1]:7000" for IPv6), "reconnect attempt 2
        /// in 2.318 s" (delays to the millisecond), "reconnect attempt 2 to 10.0.0.2:7000 in 2.318 s"
        /// (with several endpoints), "heartbeat interval 210 s → 270 s (stepped up)", ….
        public var description: String {
            switch self {
            case .connected(let host, let port): return "connected to \(Endpoint(host: host, port: port))"
            case .secured(let version, let reused): return "secured with \(version)\(reused ? " (session resumed)" : "")"
            case .connectFailed(let error): return "connect failed: \(error)"
            case .disconnected(let reason): return "disconnected (\(reason))"
            case .reconnecting(let attempt, let delay, let endpoint):
                return "reconnect attempt \(attempt)\(endpoint.map { " to \($0)" } ?? "") in \(delay.secondsText) s"
            case .serverUnavailable: return "server unavailable"
            case .received(let message): return "received \(message)"
            case .stored(let id, let message): return "stored #\(id): \(message)"
            case .refused(let id, let message): return "refused #\(id): \(message)"
            case .sendFailed(let message, let reason): return "send failed (\(reason)): \(message)"
            case .heartbeatProbe(let interval, let succeeded):
                return "heartbeat after \(interval.secondsText) s idle \(succeeded ? "answered" : "failed")"
            case .heartbeatIntervalChanged(let from, let to, let reason):
                return "heartbeat interval \(from.secondsText) s → \(to.secondsText) s (\(reason))"
            case .networkChanged(let from, let to):
                return "network changed: \(from ?? "unknown") → \(to ?? "unknown")"
            }
        }
    }
}

/// ``LongLinkClient/Configuration``'s heartbeat settings, stored together (see the properties there).
struct LinkHeartbeatSettings: Sendable {
    var interval: Duration = .seconds(180)
    var ackTimeout: Duration?
    var smart: SmartHeartbeat?
}

/// ``LongLinkClient/Configuration``'s reliable-delivery settings, stored together (see the properties
/// there).
struct LinkDeliverySettings: Sendable {
    var outboxLimit = 10_000
    var unacknowledgedWindow = 256
    var reportsStoredAnswers = false
}

extension Duration {
    /// Seconds as a short decimal, to the millisecond: "0", "2", "0.25", "2.718" (for 2.718281828 s).
    var secondsText: String {
        let (seconds, attoseconds) = components
        let value = ((Double(seconds) + Double(attoseconds) / 1e18) * 1000).rounded() / 1000
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
