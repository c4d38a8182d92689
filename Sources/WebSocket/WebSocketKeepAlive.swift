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

    /// How long after the connection opens, and after each Pong, the next Ping goes out (whole
    /// nanoseconds).
    public var interval: Duration { .nanoseconds(intervalNanoseconds) }
    /// How long a Ping's Pong may take (whole nanoseconds).
    public var timeout: Duration { .nanoseconds(timeoutNanoseconds) }
    /// The payload of the Ping waiting for its Pong; nil between pings.
    public var awaiting: Data? { isAwaiting ? Self.payload(sent) : nil }

    // Every idle connection holds this value: 21 bytes (two `Duration`s and a `Data?` were 52).
    private let intervalNanoseconds: Int64
    private let timeoutNanoseconds: Int64
    /// Pings sent; the last one's payload is ``awaiting`` while `isAwaiting`.
    private var sent: UInt32 = 0
    private var isAwaiting = false

    /// Keep-alive with a Ping `interval` after each answer and a Pong `timeout`, both counted in whole
    /// nanoseconds (less is dropped).
    public init(interval: Duration = WebSocketKeepAlive.defaultInterval, timeout: Duration = WebSocketKeepAlive.defaultTimeout) {
        intervalNanoseconds = Self.nanoseconds(interval)
        timeoutNanoseconds = Self.nanoseconds(timeout)
    }

    /// `duration` in whole nanoseconds, clamped to `Int64`'s range.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }

    /// A Ping's payload: the 4-byte big-endian count of pings sent.
    private static func payload(_ count: UInt32) -> Data { withUnsafeBytes(of: count.bigEndian) { Data($0) } }

    /// The connection is open: the first Ping in ``interval``.
    public func start() -> [Action] { [.startTimer(interval)] }

    /// The timer fired: a Ping is due, or the one sent went unanswered.
    public mutating func timerFired() -> [Action] {
        guard !isAwaiting else { return [.timedOut] }
        sent &+= 1
        isAwaiting = true
        return [.sendPing(Self.payload(sent)), .startTimer(timeout)]
    }

    /// A Pong arrived with `payload`: the answer to the Ping waiting, if it matches; the next Ping in
    /// ``interval``.
    public mutating func receivedPong(_ payload: Data) -> [Action] {
        guard let awaiting, awaiting == payload else { return [] }
        isAwaiting = false
        return [.startTimer(interval)]
    }
}
