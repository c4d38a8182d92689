import Foundation

extension ChatClient {
    /// What a status line shows about a session: the connection, whether the server has been
    /// unreachable for the whole reconnect schedule, how many own messages wait in the outbox, and
    /// whether the input has ended. Reported to `onStatus` (``ChatClient/init(configuration:group:output:onStatus:onFinish:)``)
    /// on the client's queue whenever it changes, in order with the output lines; ``line(now:color:timeZone:)``
    /// writes it for a terminal.
    public struct Status: Sendable, Equatable {
        /// Where the connection stands.
        public enum Connection: Sendable, Equatable {
            /// Connecting to `host`:`port` for the first time.
            case connecting(host: String, port: UInt16)
            /// Connected; the login as `name` is on its way.
            case loggingIn(name: String)
            /// Logged in as `name`; `liveOnly` when logged in without a password (version 2: nothing
            /// stored for this user).
            case online(name: String, liveOnly: Bool)
            /// Dropped; reconnect attempt `attempt` (`nil` after a throttled login) starts at `at`
            /// (wall clock).
            case reconnecting(attempt: Int?, at: Date)
            /// Not connected and not trying: the session is over (quit, refused, given up).
            case offline
        }

        /// Where the connection stands. Starts as ``Connection/connecting(host:port:)``.
        public var connection: Connection
        /// True once every attempt of the reconnect schedule failed (the client keeps trying); false
        /// again once logged in. Default false.
        public var serverUnavailable = false
        /// Version 2: own messages in the outbox, not yet stored by the server (nor refused); `nil`
        /// for version 1, which keeps none.
        public var outboxCount: Int?
        /// True once the input has ended (end of file, `/quit`): the session ends once the outbox is
        /// empty (or ``Configuration/wait`` passes). Default false.
        public var inputEnded = false
        /// With ``Configuration/smartHeartbeat``: the interval heartbeats go out at now (learned for
        /// the network); `nil` with the fixed heartbeat.
        public var heartbeatInterval: Duration?

        /// A status for a session that starts connecting to `host`:`port`.
        public init(connecting host: String, port: UInt16, outboxCount: Int?) {
            connection = .connecting(host: host, port: port)
            self.outboxCount = outboxCount
        }

        /// True while the line changes with time alone (a reconnect countdown): redraw it every second.
        public var isCountingDown: Bool {
            if case .reconnecting = connection { return true }
            return false
        }

        /// The status as one line for a terminal, between brackets, its parts separated by ` · `:
        /// `[connecting to 127.0.0.1:7777…]`, `[logging in as ann…]`, `[online as ann]`,
        /// `[online as ann (live only)]`, `[reconnecting in 8 s (attempt 4 at 14:02:11)]` (seconds
        /// rounded up from `now`; `[reconnecting now (attempt 4)]` once due), with
        /// `server unavailable; ` before it after the whole schedule failed, `[offline]`; then
        /// ` · 2 messages waiting` while the outbox holds some, ` · heartbeat 270 s` with the smart
        /// heartbeat (its current interval, whole seconds) and ` · leaving` once the input ended.
        /// With `color`, the state is green (online), yellow (connecting, logging in, reconnecting) or
        /// red (server unavailable, offline), as ANSI SGR sequences; times are in `timeZone`.
        public func line(now: Date, color: Bool, timeZone: TimeZone = .current) -> String {
            let state: String
            let hue: ANSIColor
            switch connection {
            case .connecting(let host, let port):
                state = "connecting to \(host.terminalSafe):\(port)…"
                hue = .yellow
            case .loggingIn(let name):
                state = "logging in as \(name.terminalSafe)…"
                hue = .yellow
            case .online(let name, let liveOnly):
                state = "online as \(name.terminalSafe)\(liveOnly ? " (live only)" : "")"
                hue = .green
            case .reconnecting(let attempt, let at):
                let left = at.timeIntervalSince(now)
                let number = attempt.map { "attempt \($0)" }
                var text: String
                if left > 0 {
                    let seconds = Int(left.rounded(.up))
                    let clock = ChatLines.clockTime(at, timeZone: timeZone, withSeconds: true)
                    text = "reconnecting in \(seconds) s (\(number.map { "\($0) at " } ?? "at ")\(clock))"
                } else {
                    text = "reconnecting now\(number.map { " (\($0))" } ?? "")"
                }
                if serverUnavailable { text = "server unavailable; " + text }
                state = text
                hue = serverUnavailable ? .red : .yellow
            case .offline:
                state = "offline"
                hue = .red
            }
            var parts = [color ? hue.wrap(state) : state]
            if let outboxCount, outboxCount > 0 {
                parts.append(outboxCount == 1 ? "1 message waiting" : "\(outboxCount) messages waiting")
            }
            if let heartbeatInterval { parts.append("heartbeat \(heartbeatInterval.components.seconds) s") }
            if inputEnded { parts.append("leaving") }
            return "[" + parts.joined(separator: " · ") + "]"
        }
    }
}

/// The ANSI colours (SGR 31-36, ECMA-48) the chat client uses in a terminal: for names (``forName(_:)``)
/// and the status line.
enum ANSIColor: Int, CaseIterable, Sendable {
    case red = 31, green, yellow, blue, magenta, cyan

    /// `text` in this colour, then back to the default colour (SGR 39).
    func wrap(_ text: String) -> String { "\u{1B}[\(rawValue)m\(text)\u{1B}[39m" }

    /// The colour of `name`: one of the six, from the 32-bit FNV-1a hash of its UTF-8 bytes, so a name
    /// has the same colour in every line, session and client.
    static func forName(_ name: String) -> ANSIColor {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return allCases[Int(hash % UInt32(allCases.count))]
    }
}
