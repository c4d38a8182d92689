import LongLink

extension ChatClient {
    /// Why the session ended, as a process exit status.
    public enum ExitStatus: Int32, Sendable {
        /// A clean quit: with protocol 2, every message accepted has been stored (or refused).
        case quit = 0
        /// The server could not be reached (or stored nothing) within ``Configuration/wait`` after the
        /// input ended; with protocol 2 the messages still in the outbox are kept for the next start.
        /// With ``ReconnectPolicy/giveUp`` also: the reconnect attempts ran out.
        case serverUnavailable = 1
        /// The server refused the name (`nameTaken`, `invalidName`) or the password (`badPassword`).
        case loginRefused = 2
    }

    /// How the client writes its lines (``ClientOptions/help`` lists both).
    public enum OutputStyle: Sendable, Equatable {
        /// For a person: arrows and check marks (`#17 → bob: hi`, `✓ #17 stored`, `✓✓ #17 received by
        /// bob`), reconnect times as clock times.
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

        /// A configuration for `name` on `host`:`port` with the defaults above.
        public init(name: String, host: String, port: UInt16) {
            self.name = name
            self.host = host
            self.port = port
        }
    }
}
