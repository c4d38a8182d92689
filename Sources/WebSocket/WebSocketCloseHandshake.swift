import AsyncSocket
import SocketFraming

/// The closing handshake of one WebSocket connection (RFC 6455 §5.5.1, §7.1) as a value: inputs in
/// (the app closes, a Close frame arrives, the connection fails, the close timeout fires, TCP ends),
/// actions out (send a Close frame, close TCP, start or cancel the close timeout, report the end). No
/// socket and no timer: the connection that owns it performs the actions, so the rules are tested as
/// values.
///
/// ```
///             app closes: send Close(code), start the timeout
///   ┌──────┐ ──────────────────────────────────────────────▶ ┌───────────┐
///   │ open │                                                 │ closeSent │── timeout: close TCP,
///   └──────┘ ── Close arrives: answer it ──┐                 └───────────┘   report 1006
///      │                                   ▼                       │ Close arrives
///      │ TCP ends: 1006          ┌──────────────────┐ ◀────────────┘
///      │ fails: Close(1002…),    │ handshakeDone    │  server: close TCP now
///      │ close TCP               │ (code, reason)   │  client: wait for the server's TCP close,
///      ▼                         └──────────────────┘  at most the timeout
///   ┌────────┐ ◀──────────────────────── TCP ends (or timeout): clean, the code received
///   │ closed │
///   └────────┘
/// ```
///
/// The code and reason reported are those of the first Close frame received (§7.1.5, §7.1.6): 1005 when
/// it had none; 1006 when TCP ended before the handshake was done. The server closes TCP as soon as the
/// Close frames have crossed; the client waits for the server to (§5.5.1, §7.1.1).
public struct WebSocketCloseHandshake: Sendable, Equatable {
    /// Which end of the connection this is: it decides who closes TCP first.
    public enum Role: Sendable, Equatable {
        /// The end that accepted the connection: closes TCP first.
        case server
        /// The end that opened it: waits for the server to close TCP.
        case client
    }

    /// Where the handshake is. The cases with data hold it boxed (`indirect`): an open connection, the
    /// usual state of an idle one, holds one word for it instead of about 60 bytes.
    public enum State: Sendable, Equatable {
        /// Messages flow both ways.
        case open
        /// This side sent Close (`code` nil: a Close frame with no body) and waits for the peer's.
        indirect case closeSent(code: WebSocketCloseCode?, reason: String)
        /// Both Close frames have crossed; TCP is being closed. `code` and `reason` are the received frame's.
        indirect case handshakeDone(code: WebSocketCloseCode?, reason: String)
        /// Over.
        indirect case closed(WebSocketCloseResult)
    }

    /// What to do.
    public enum Action: Sendable, Equatable {
        /// Send a Close frame with `code` (nil: no body) and `reason` (at most ``maxReasonBytes`` bytes of UTF-8).
        case sendClose(code: WebSocketCloseCode?, reason: String)
        /// Close the TCP connection: after what is queued has been written, or at once.
        case closeTransport(afterWriting: Bool)
        /// Start (or restart) the close timeout.
        case startTimeout(Duration)
        /// Stop the close timeout.
        case cancelTimeout
        /// The connection is closed: tell the app.
        case report(WebSocketCloseResult)
    }

    /// The most bytes of a close reason: a control frame's payload is at most 125 bytes, two of them the
    /// code (RFC 6455 §5.5).
    public static let maxReasonBytes = 123

    /// How long a closing side waits for its peer's Close frame, and a client for the server to close
    /// TCP. Default 10 s (as the Python `websockets` library's `close_timeout`).
    public static let defaultTimeout: Duration = .seconds(10)

    /// This end's role.
    public let role: Role
    /// How long to wait for the peer's Close frame, and (a client) for the server's TCP close.
    public let timeout: Duration
    /// Where the handshake is.
    public private(set) var state = State.open

    /// An open connection's handshake for `role`, with `timeout` for the peer's answers.
    public init(role: Role, timeout: Duration = WebSocketCloseHandshake.defaultTimeout) {
        self.role = role
        self.timeout = timeout
    }

    private var isHandshakeDone: Bool {
        if case .handshakeDone = state { return true }
        return false
    }

    /// Whether the app may still send messages: only while ``State/open`` (no data after a Close, §5.5.1).
    public var canSend: Bool { state == .open }

    /// Whether a data frame that arrives now is handed to the app: until the peer's Close frame.
    public var deliversMessages: Bool {
        switch state {
        case .open, .closeSent: return true
        case .handshakeDone, .closed: return false
        }
    }

    /// The app closes with `code` (nil: no body) and `reason`. Does nothing once closing has begun.
    public mutating func close(code: WebSocketCloseCode?, reason: String = "") -> [Action] {
        guard state == .open else { return [] }
        state = .closeSent(code: code, reason: reason)
        return [.sendClose(code: code, reason: reason), .startTimeout(timeout)]
    }

    /// The peer's Close frame arrived, with `code` (nil: none) and `reason` (both already checked by the
    /// frame layer). Answered with the same code when this side has not sent one (§5.5.1).
    public mutating func receivedClose(code: WebSocketCloseCode?, reason: String) -> [Action] {
        switch state {
        case .open:
            state = .handshakeDone(code: code, reason: reason)
            return [.sendClose(code: code, reason: "")] + afterCrossing(timeoutRunning: false)
        case .closeSent:
            state = .handshakeDone(code: code, reason: reason)
            return afterCrossing(timeoutRunning: true)
        case .handshakeDone, .closed:
            return []  // a second Close: nothing more to do (§5.5.1 allows no frame after it)
        }
    }

    /// The server closes TCP at once; the client waits for the server to, within the timeout (the one
    /// running since its own Close, or a new one).
    private func afterCrossing(timeoutRunning: Bool) -> [Action] {
        switch role {
        case .server: return (timeoutRunning ? [.cancelTimeout] : []) + [.closeTransport(afterWriting: true)]
        case .client: return timeoutRunning ? [] : [.startTimeout(timeout)]
        }
    }

    /// This side fails the connection (RFC 6455 §7.1.7): a protocol error, invalid UTF-8 or a message too
    /// big (`code` 1002, 1007, 1009, …): a Close frame with `code` if none was sent, then TCP closes once
    /// it is written. Reported as not clean, with `code`.
    public mutating func fail(code: WebSocketCloseCode, reason: String) -> [Action] {
        let result = WebSocketCloseResult(code: code, reason: reason, wasClean: false)
        switch state {
        case .open:
            state = .closed(result)
            return [.sendClose(code: code, reason: reason), .closeTransport(afterWriting: true), .report(result)]
        case .closeSent, .handshakeDone:
            state = .closed(result)
            return [.cancelTimeout, .closeTransport(afterWriting: false), .report(result)]
        case .closed:
            return []
        }
    }

    /// The close timeout fired: the peer never answered this side's Close (reported 1006), or, on a
    /// client, the server did not close TCP after the handshake (reported clean, with the code received).
    public mutating func timeoutFired() -> [Action] {
        let result: WebSocketCloseResult
        switch state {
        case .closeSent: result = WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false)
        case .handshakeDone(let code, let reason):
            result = WebSocketCloseResult(code: code ?? .noStatusReceived, reason: reason, wasClean: true)
        case .open, .closed: return []
        }
        state = .closed(result)
        return [.closeTransport(afterWriting: false), .report(result)]
    }

    /// TCP ended (the peer closed it, or it broke): clean after the handshake, else 1006 (§7.1.5).
    public mutating func transportClosed() -> [Action] {
        let result: WebSocketCloseResult
        switch state {
        case .open: result = WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false)
        case .closeSent: result = WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false)
        case .handshakeDone(let code, let reason):
            result = WebSocketCloseResult(code: code ?? .noStatusReceived, reason: reason, wasClean: true)
        case .closed: return []
        }
        let timerRunning = state != .open && !(role == .server && isHandshakeDone)
        state = .closed(result)
        return (timerRunning ? [.cancelTimeout] : []) + [.report(result)]
    }
}

/// How a WebSocket connection ended (RFC 6455 §7.1.5–§7.1.7, and the browser API's `CloseEvent`).
public struct WebSocketCloseResult: Sendable, Equatable, CustomStringConvertible {
    /// The code of the first Close frame received; 1005 when it had none; 1006 when TCP ended before the
    /// closing handshake was done; the code this side sent when it failed the connection.
    public let code: WebSocketCloseCode
    /// The reason of that Close frame (UTF-8, at most 123 bytes), or this side's when it failed it.
    public let reason: String
    /// True when the closing handshake was done before TCP closed.
    public let wasClean: Bool
    /// For a 1006 end, the error TCP (or TLS) ended with, when it ended with one: a send's
    /// `SocketError.writeTimeout(tag:)` (with the tag the app gave ``WebSocket/send(text:withTimeout:tag:)``),
    /// `.closedByPeer`, `.connectionReset(operation:errno:)`. Nil otherwise.
    public let error: SocketError?

    /// A result with these values.
    public init(code: WebSocketCloseCode, reason: String, wasClean: Bool, error: SocketError? = nil) {
        self.code = code
        self.reason = reason
        self.wasClean = wasClean
        self.error = error
    }

    /// `1000 "bye" (clean)`, `1006 (not clean)`, `1006 (not clean): write timed out (tag 2)`.
    public var description: String {
        "\(code)\(reason.isEmpty ? "" : " \"\(reason)\"") (\(wasClean ? "clean" : "not clean"))\(error.map { ": \($0)" } ?? "")"
    }
}
