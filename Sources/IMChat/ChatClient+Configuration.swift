import AsyncSocket
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
        /// The server's host name or numeric address.
        public var host: String
        /// The server's TCP port.
        public var port: UInt16
        /// Time between heartbeats. Default 180 s (the articles' value).
        public var heartbeat: Duration = .seconds(180)
        /// TLS client settings (``TLSConfiguration``: the server verified as ``host`` by default);
        /// `nil` (the default): plaintext. `im-client --tls [--ca FILE]`.
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
        /// How lines are written. Default ``OutputStyle/pipe``.
        public var style: OutputStyle = .pipe
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

        /// A configuration for `name` on `host`:`port` with the defaults above.
        public init(name: String, host: String, port: UInt16) {
            self.name = name
            self.host = host
            self.port = port
        }
    }
}
