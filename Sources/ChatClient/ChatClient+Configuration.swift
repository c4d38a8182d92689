import AsyncSocket
import ChatProtocol
import Foundation
import LongLink

extension ChatClient {
    /// Why the session ended, as a process exit status.
    public enum ExitStatus: Int32, Sendable {
        /// A clean quit: with protocol 2, every message accepted has been stored (or refused).
        case quit = 0
        /// The server could not be reached (or stored nothing, or did not answer the login) within
        /// ``Configuration/wait`` after the input ended; with protocol 2 the messages still in the
        /// outbox are kept for the next start.
        /// With ``ReconnectPolicy/giveUp`` also: the reconnect attempts ran out.
        case serverUnavailable = 1
        /// The server refused the name (`nameTaken`, `invalidName`) or the password (`badPassword`).
        case loginRefused = 2
        /// The session ended as for ``quit``, but something failed along the way: a message was refused,
        /// the server answered a request with an error, or a typed command could not be carried out
        /// (not understood, or not available with protocol version 1). The error lines say what.
        case completedWithErrors = 4
    }

    /// How the client writes its lines (``ClientOptions/help`` lists both).
    public enum OutputStyle: Sendable, Equatable {
        /// For a person: arrows and check marks (`#17 → bob: hi`, `✓ #17 stored`, `✓✓ #17 received by
        /// bob`), reconnect times as clock times, every line after its local time (`14:02 bob: hi`),
        /// names in colour with ``Configuration/color``.
        case terminal
        /// For a script: the same events as plain words (`accepted #17 to bob: hi`, `stored #17`,
        /// `received #17 by bob`), one per line, numbers as digits, times in milliseconds since 1970.
        case pipe
    }

    /// Everything a ``ChatClient`` needs to know. Defaults are `im-client`'s.
    public struct Configuration: Sendable {
        /// The user name to log in with.
        public var name: String
        /// The servers of the chat, in order of preference: one, or several nodes of one chat (a
        /// cluster). The client connects to the first; when a connect fails or the connection drops
        /// (not by the user's choice), each reconnect attempt goes to the next one, round robin, on
        /// ``reconnectSchedule``'s timing (``LongLinkClient/Configuration/endpoints``). Version 2 keeps
        /// its files (``ChatClientState``) under the first endpoint's name, whichever node it is
        /// connected to. Must not be empty (the link then reports the server unavailable at once).
        public var endpoints: [Endpoint]
        /// The first endpoint's host name or numeric address (`""` when ``endpoints`` is empty);
        /// setting it changes the first endpoint only.
        public var host: String {
            get { endpoints.first?.host ?? "" }
            set {
                if endpoints.isEmpty { endpoints = [Endpoint(host: newValue, port: 0)] } else { endpoints[0].host = newValue }
            }
        }
        /// The first endpoint's TCP port (0 when ``endpoints`` is empty); setting it changes the first
        /// endpoint only.
        public var port: UInt16 {
            get { endpoints.first?.port ?? 0 }
            set {
                if endpoints.isEmpty { endpoints = [Endpoint(host: "", port: newValue)] } else { endpoints[0].port = newValue }
            }
        }
        /// Time between heartbeats. Default 180 s (the articles' value).
        public var heartbeat: Duration = .seconds(180)
        /// The adaptive heartbeat (``LongLink/SmartHeartbeat``): learns per network how long the NAT
        /// keeps an idle connection and beats just under it, instead of every ``heartbeat``; the
        /// status line shows the interval. `nil` (the default): the fixed ``heartbeat``.
        /// `im-client --smart-heartbeat` (learned intervals in the data directory).
        public var smartHeartbeat: SmartHeartbeat?
        /// TLS client settings (``TLSConfiguration``); with a `nil` ``TLSConfiguration/peerName`` each
        /// connection's server is verified as the host of the endpoint it went to (a name set here is
        /// checked on every endpoint). `nil` (the default): plaintext. `im-client --tls [--ca FILE]`.
        public var tls: TLSConfiguration?
        /// The protocol version. Default ``ChatProtocolVersion/v2``: numbered messages in a persistent
        /// outbox until the server stores them, receipts, history. ``ChatProtocolVersion/v1``: live
        /// messages only, no ids, no files.
        public var protocolVersion: ChatProtocolVersion = .v2
        /// Version 2: the password that claims or opens the name; `nil` (the default) logs in live only
        /// (nothing stored for this user, no history, no receipts). Never printed.
        public var password: String?
        /// Version 2: the directory for ``ChatClientState``'s files. `nil` (the default) means
        /// ``ChatClientState/defaultDirectory(environment:)``.
        public var dataDirectory: String?
        /// When to retry after a drop: the schedule's attempts (default 0 s, 2 s, 4 s, each plus up to
        /// 1 s of jitter), after which the server is reported unavailable.
        public var reconnectSchedule = ReconnectSchedule()
        /// What follows the schedule's attempts. Default ``ReconnectPolicy/keepTrying(cap:)`` with a 60 s
        /// cap: "server unavailable" is shown once, as a warning, and the client keeps trying until the
        /// input ends. ``ReconnectPolicy/giveUp``: the session ends with
        /// ``ExitStatus/serverUnavailable`` when the attempts run out.
        public var reconnectPolicy: ReconnectPolicy = .keepTrying()
        /// Once the input has ended, how long to wait for the server to store what is still in the
        /// outbox, restarted whenever a message is stored or refused; then the session ends with
        /// ``ExitStatus/serverUnavailable`` (the outbox is kept). Measured on the event loop group's
        /// clock. Default 30 s.
        public var wait: Duration = .seconds(30)
        /// How lines are shown: the style, colour, times and clock. Defaults: ``OutputStyle/pipe``, no
        /// colour, no timestamps, the process's time zone, `Date()`.
        public var display = Display()

        /// How lines are shown: the style, colour, times and clock.
        public struct Display: Sendable {
            /// How lines are written. Default ``OutputStyle/pipe``.
            public var style: OutputStyle = .pipe
            /// ``OutputStyle/terminal`` only: names in colour, one of six ANSI colours chosen by a hash of
            /// the name. Default false; `im-client` turns it on in a terminal unless `NO_COLOR` is set
            /// (``ClientOptions/wantsColor(terminal:environment:)``).
            public var color = false
            /// ``OutputStyle/pipe`` only: every line starts with its UTC time, ISO 8601 to the millisecond,
            /// and a space (`2023-11-14T22:13:20.123Z stored #17`). Default false (`im-client --timestamps`).
            public var timestamps = false
            /// The time zone of the clock times a terminal shows (line times, reconnect times). Default the
            /// process's (`TZ`, else the system's).
            public var timeZone = TimeZone.current
            /// The wall clock for line times and reconnect times (not for timers, which the event loop
            /// group's clock measures). Default `Date()`.
            public var clock: @Sendable () -> Date = { Date() }

            /// The defaults above.
            public init() {}
        }

        /// A configuration for `name` on the one server at `host`:`port` with the defaults above.
        public init(name: String, host: String, port: UInt16) {
            self.init(name: name, endpoints: [Endpoint(host: host, port: port)])
        }

        /// A configuration for `name` on the chat whose servers are `endpoints` (see ``endpoints``;
        /// not empty) with the defaults above.
        public init(name: String, endpoints: [Endpoint]) {
            self.name = name
            self.endpoints = endpoints
        }
    }
}
