import AsyncSocket
import Foundation

extension LongLinkClient {
    /// Where to connect and how to keep the link alive. Every default is the articles' value.
    public struct Configuration: Sendable {
        /// The server's host name or numeric address.
        public var host: String
        /// The server's TCP port.
        public var port: UInt16
        /// Seconds allowed for each connect, name resolution included. Default 20 s (article 002).
        public var connectTimeout: TimeInterval = 20
        /// Time between heartbeats while connected. Default 180 s, the articles' three minutes, which
        /// keeps carrier NAT mappings alive (MISSION M4).
        public var heartbeatInterval: Duration = .seconds(180)
        /// How long after an unanswered heartbeat the link counts as dead and is dropped with
        /// ``DisconnectReason/heartbeatTimeout``. `nil` (the default) means one ``heartbeatInterval``:
        /// the link is dead when the next heartbeat is due and the last one is still unanswered.
        public var heartbeatAckTimeout: Duration?
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
        /// How long a connection must stay up before it counts as healthy and the reconnect schedule
        /// starts over (the next unrequested drop retries from attempt 1). A connection that drops
        /// sooner continues the schedule: a server that accepts, sends a message and closes is
        /// retried after 0 s, 2 s, 4 s (plus jitter) and then reported unavailable, not reconnected to
        /// in a tight loop. Measured from the moment the connection is established. `nil` (the
        /// default) means one ``heartbeatInterval`` (180 s by default): a link counts as healthy once
        /// it has lived to send its first heartbeat. `.zero` or less resets at every connect.
        public var linkHealthyAfter: Duration?
        /// Messages kept while disconnected, sent in order after the next connect. Beyond this, ``send(_:)``
        /// fails with ``SendFailure/queueFull``. Default 1,000 messages.
        public var offlineQueueLimit = 1000
        /// Bytes that may wait in the socket to be written. Beyond this (the server or the network is
        /// slower than the app), new messages wait in the offline queue until half of it has drained.
        /// Default 4 MiB.
        public var maxQueuedBytes = 4 << 20
        /// How long ``LongLinkClient/disconnectAfterSending()`` waits for the server to acknowledge
        /// its final heartbeat before closing anyway. Default 5 s.
        public var drainTimeout: Duration = .seconds(5)

        /// A configuration for `host` and `port` with the articles' defaults.
        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
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
        /// Heartbeats went unanswered for ``Configuration/heartbeatAckTimeout``.
        case heartbeatTimeout
        /// The server sent bytes that are not a valid frame or message.
        case protocolError(String)

        public var description: String {
            switch self {
            case .byUser: return "by user"
            case .byServer: return "by server"
            case .network(let error): return "by network: \(error)"
            case .heartbeatTimeout: return "heartbeat timeout"
            case .protocolError(let why): return "protocol error: \(why)"
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

        public var description: String {
            switch self {
            case .queueFull: return "offline queue full"
            case .encodingFailed(let why): return "cannot encode: \(why)"
            case .linkClosed: return "link closed"
            }
        }
    }

    /// Everything the link tells the app, in order.
    public enum Event: Sendable, CustomStringConvertible {
        /// Connected (first time or again) to the server at `host` (numeric) and `port`.
        case connected(host: String, port: UInt16)
        /// A connect attempt failed with `error`.
        case connectFailed(SocketError)
        /// An established connection ended for `reason`.
        case disconnected(DisconnectReason)
        /// Attempt number `attempt` (from 1) will start after `delay`: the schedule's base delay plus
        /// its jitter (``ReconnectSchedule``); by default attempt 2 waits at least 2 s and less than 3 s.
        case reconnecting(attempt: Int, delay: Duration)
        /// Every reconnect attempt failed; the link stops until ``LongLinkClient/connect()`` is called again.
        case serverUnavailable
        /// A message from the server (never a heartbeat acknowledgement).
        case received(Codec.Message)
        /// `message` will not be sent, for `reason`.
        case sendFailed(Codec.Message, SendFailure)

        /// One line for logs: "connected to 127.0.0.1:7000", "reconnect attempt 2 in 2.318 s" (delays to
        /// the millisecond), ….
        public var description: String {
            switch self {
            case .connected(let host, let port): return "connected to \(host):\(port)"
            case .connectFailed(let error): return "connect failed: \(error)"
            case .disconnected(let reason): return "disconnected (\(reason))"
            case .reconnecting(let attempt, let delay): return "reconnect attempt \(attempt) in \(delay.secondsText) s"
            case .serverUnavailable: return "server unavailable"
            case .received(let message): return "received \(message)"
            case .sendFailed(let message, let reason): return "send failed (\(reason)): \(message)"
            }
        }
    }
}

extension Duration {
    /// Seconds as a short decimal, to the millisecond: "0", "2", "0.25", "2.718" (for 2.718281828 s).
    var secondsText: String {
        let (seconds, attoseconds) = components
        let value = ((Double(seconds) + Double(attoseconds) / 1e18) * 1000).rounded() / 1000
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
