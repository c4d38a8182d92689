import Foundation

/// Keep-alive pings of one WebSocket connection (RFC 6455 §5.5.2, §5.5.3) as a value, in the Python
/// `websockets` library's way: `interval` after the connection opens (and after each answer) a Ping
/// goes out with a payload of its own, and its Pong must come back within `timeout`, or the connection
/// is closed (1011, "keepalive ping timeout"). Defaults 20 s and 20 s, `websockets`' `ping_interval`
/// and `ping_timeout`. Pongs that answer nothing of ours (unsolicited, or an older ping) are ignored.
///
/// One timer: the owner starts it as the actions say and calls ``timerFired()`` when it fires.
public struct WebSocketKeepAlive: Sendable, Equatable {
    /// What to do.
    public enum Action: Sendable, Equatable {
        /// Send a Ping frame with this payload (4 bytes, a big-endian counter from 1).
        case sendPing(Data)
        /// Start (or restart) the one timer, firing after this long.
        case startTimer(Duration)
        /// No Pong came in time: close the connection (code 1011, "keepalive ping timeout").
        case timedOut
    }

    /// The defaults of the Python `websockets` library: 20 s.
    public static let defaultInterval: Duration = .seconds(20)
    /// The defaults of the Python `websockets` library: 20 s.
    public static let defaultTimeout: Duration = .seconds(20)

    /// How long after the connection opens, and after each Pong, the next Ping goes out.
    public let interval: Duration
    /// How long a Ping's Pong may take.
    public let timeout: Duration
    /// The payload of the Ping waiting for its Pong; nil between pings.
    public private(set) var awaiting: Data?
    private var sent: UInt32 = 0

    /// Keep-alive with a Ping `interval` after each answer and a Pong `timeout`.
    public init(interval: Duration = WebSocketKeepAlive.defaultInterval, timeout: Duration = WebSocketKeepAlive.defaultTimeout) {
        self.interval = interval
        self.timeout = timeout
    }

    /// The connection is open: the first Ping in ``interval``.
    public func start() -> [Action] { [.startTimer(interval)] }

    /// The timer fired: a Ping is due, or the one sent went unanswered.
    public mutating func timerFired() -> [Action] {
        guard awaiting == nil else { return [.timedOut] }
        sent &+= 1
        let payload = withUnsafeBytes(of: sent.bigEndian) { Data($0) }
        awaiting = payload
        return [.sendPing(payload), .startTimer(timeout)]
    }

    /// A Pong arrived with `payload`: the answer to the Ping waiting, if it matches; the next Ping in
    /// ``interval``.
    public mutating func receivedPong(_ payload: Data) -> [Action] {
        guard let awaiting, awaiting == payload else { return [] }
        self.awaiting = nil
        return [.startTimer(interval)]
    }
}
