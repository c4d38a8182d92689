import SocketBench
import AsyncSocket
import ChatProtocol
import FramedSocket
import Foundation
import LongLink
import SocketFraming

/// What a ``ChatConnection`` tells the run that owns it. Every call comes on the client's event-loop
/// thread, with the time (``MonotonicClock``, nanoseconds) read when the frame was decoded.
protocol ChatConnectionHandler: AnyObject {
    /// The server accepted the connection's login (stored or live, as asked).
    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64)
    /// A frame from the server after the login's answer.
    func connection(_ connection: ChatConnection, didReceive event: ServerEvent, at now: UInt64)
    /// The connection failed: refused login, connect error, undecodable frame, or closed by the server
    /// while the run still needed it. Called at most once per connection, never after ``ChatConnection/close()``.
    func connection(_ connection: ChatConnection, didFail reason: String)
}

/// How a bench connection logs in (docs/PROTOCOL.md).
struct ChatLogin: Equatable, Sendable {
    /// Protocol version 1 (live only, no ids) or 2.
    var version: ChatProtocolVersion
    /// Version 2 only: with a password the session is stored (numbered deliveries, `stored` answers with
    /// sequence numbers, `received` acknowledgements); without, live only.
    var password: String?

    /// Version 2 with the bench's password: a stored session.
    static let stored = ChatLogin(version: .v2, password: RunTag.password)
}

/// One chat client connection of a bench run, in either protocol version, on a ``TCPSocket`` with no
/// delegate queue: it connects (from a given source address, if any), logs in, hands every frame to its
/// ``ChatConnectionHandler`` as a ``ServerEvent``, and, in a stored session, acknowledges deliveries
/// cumulatively, one `received` per conversation per loop pass, as docs/PROTOCOL.md asks of clients.
///
/// Frames are read with any function code and decoded only when a run needs them
/// (``ServerEvent/decodedCodes``); error bodies are read loosely, so codes newer than this build are
/// counted by name instead of ending the connection.
///
/// With ``keepsOutbox`` it behaves as docs/PROTOCOL.md asks of a client that reconnects: every numbered
/// message stays in its outbox until its `stored` answer, and ``reconnect(to:from:positions:)`` logs in
/// again (same client instance, password, resume token and the positions given) on a new socket and
/// resends the outbox in id order, with the original ids.
///
/// Everything after ``connect(to:from:)`` runs on the connection's event-loop thread (hence the
/// unchecked Sendable); so must every call of its methods.
final class ChatConnection: TCPSocketDelegate, @unchecked Sendable {
    /// Position of the connection in its run.
    let index: Int
    /// The user name it logs in as.
    let name: String
    /// The current socket: a new one for each ``reconnect(to:from:positions:)``.
    private(set) var socket: TCPSocket
    let login: ChatLogin
    /// The request target of a WebSocket upgrade (`/chat`: `socket-bench client chat --websocket`): the
    /// connection upgrades to WebSocket (RFC 6455 §4.1) before its login and carries each frame as one
    /// binary message (docs/PROTOCOL.md "WebSocket"); nil: frames straight over TCP.
    let webSocketPath: String?
    /// The WebSocket carrying ``socket``'s frames once its upgrade is answered (with ``webSocketPath``);
    /// nil before and over TCP. Loop thread.
    var channel: LinkWebSocketChannel?
    /// The `retryAfter` (seconds; 1 when missing) of a login answered `serverBusy`, read by the run
    /// when the connection fails right after (``takeBusyRetryAfter()``). Loop thread.
    private var busyRetryAfter: UInt64?
    /// Keep numbered messages until `stored` and resend them after a reconnect. Default false.
    var keepsOutbox = false
    /// Numbered messages sent and not yet answered with `stored`, by id (only with ``keepsOutbox``).
    private(set) var outbox: [UInt64: Data] = [:]
    private let group: EventLoopGroup, loop: EventLoop
    private weak var handler: (any ChatConnectionHandler)?
    /// What every frame and login carries.
    let wire: Wire
    /// The figures a run reads (``heartbeatsSent`` and the others below).
    private var tally = Tally()
    /// The login, the acknowledgements waiting, the end.
    private var session = Session()

    /// What every frame and login carries: the codec of the login's version, the client instance.
    struct Wire {
        let codec: ChatCodec
        let clientInstance: String
    }

    /// The figures a run reads.
    private struct Tally {
        /// `received` messages sent.
        var acknowledgementsSent = 0
        /// Heartbeats sent and their answers.
        var heartbeatsSent = 0, heartbeatsAnswered = 0
        /// Heartbeats left unanswered by connections that dropped (counted at each reconnect).
        var heartbeatsLost = 0
        /// Heartbeats still unanswered when the next one was due, on connections that answered again
        /// afterwards: missed. `heartbeatsLate` are those not yet confirmed: the connection has not
        /// answered since; they become missed with its next answer, or lost with it at a reconnect.
        var heartbeatsMissed = 0, heartbeatsLate = 0
        /// With ``keepsOutbox``: `storeUnavailable` answers to messages kept for the next reconnect (each
        /// ends the connection), and messages resent from the outbox after a reconnect.
        var storeRefusals = 0, messagesResent = 0
    }

    /// The login, the acknowledgements waiting, the end.
    private struct Session {
        /// The last login answer's resume token, sent with the next login.
        var resumeToken: String?
        /// Positions sent with the next login (docs/PROTOCOL.md "Receiving").
        var loginPositions: [String: UInt64] = [:]
        var isStopping = false
        var hasFailed = false
        /// Logged in and not yet closed.
        var isLoggedIn = false
        /// Highest sequence number acknowledgeable per conversation, waiting for the end of the loop pass.
        var pendingAcknowledgements: [String: UInt64] = [:]
        /// When the connect started (nanoseconds on ``MonotonicClock``; 0 before).
        var connectStart: UInt64 = 0
        /// How long the login after a ``reconnect(to:from:positions:loginTimeout:)`` may go unanswered
        /// once connected; then the attempt fails ("no login answer within …"), as a client's login
        /// deadline would end it.
        var reconnectLoginTimeout: Duration?
    }

    /// Logged in and not yet closed.
    var isLoggedIn: Bool { session.isLoggedIn }
    /// When the connect started (nanoseconds on ``MonotonicClock``; 0 before).
    var connectStart: UInt64 { session.connectStart }
    /// `received` messages sent.
    var acknowledgementsSent: Int { tally.acknowledgementsSent }
    /// Heartbeats sent.
    var heartbeatsSent: Int { tally.heartbeatsSent }
    /// Heartbeats answered.
    var heartbeatsAnswered: Int { tally.heartbeatsAnswered }
    /// Heartbeats left unanswered by connections that dropped (counted at each reconnect).
    var heartbeatsLost: Int { tally.heartbeatsLost }
    /// Heartbeats still unanswered when the next one was due, on connections that answered again
    /// afterwards: missed.
    var heartbeatsMissed: Int { tally.heartbeatsMissed }
    /// Heartbeats not yet confirmed missed: the connection has not answered since; they become missed
    /// with its next answer, or lost with it at a reconnect.
    var heartbeatsLate: Int { tally.heartbeatsLate }
    /// With ``keepsOutbox``: `storeUnavailable` answers to messages kept for the next reconnect.
    var storeRefusals: Int { tally.storeRefusals }
    /// Messages resent from the outbox after a reconnect.
    var messagesResent: Int { tally.messagesResent }

    init(
        index: Int, name: String, login: ChatLogin = .stored, webSocketPath: String? = nil, loop: EventLoop, group: EventLoopGroup,
        handler: any ChatConnectionHandler
    ) {
        self.index = index
        self.name = name
        self.login = login
        self.webSocketPath = webSocketPath
        self.handler = handler
        wire = Wire(codec: ChatCodec(version: login.version), clientInstance: ChatConnection.randomClientInstance())
        self.group = group
        self.loop = loop
        socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group, eventLoop: loop)
        socket.delegate = self
    }

    /// 32 random lowercase hexadecimal digits: a fresh client instance (docs/PROTOCOL.md).
    static func randomClientInstance() -> String {
        (0..<2).map { _ in
            let hex = String(UInt64.random(in: .min ... .max), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Starts connecting to `server`, from source address `source` (bound before the connect) when
    /// given; the login follows once connected. Any thread.
    /// - Throws: ``SocketError`` when the connect cannot start.
    func connect(to server: ServerAddress, from source: String? = nil) throws(SocketError) {
        session.connectStart = MonotonicClock.now()
        try socket.connect(toHost: server.host, onPort: server.port, viaInterface: source, withTimeout: 30)
    }

    /// Starts over after the connection dropped (``ChatConnectionHandler/connection(_:didFail:)``): a
    /// new socket to `server` (from `source`), logging in with `positions`, then resending the outbox.
    /// Heartbeats the old connection left unanswered move to ``heartbeatsLost``. Loop thread.
    /// - Throws: ``SocketError`` when the connect cannot start.
    func reconnect(
        to server: ServerAddress, from source: String?, positions: [String: UInt64], loginTimeout: Duration
    ) throws(SocketError) {
        let old = socket
        old.delegate = nil
        old.disconnect()
        tally.heartbeatsLost += tally.heartbeatsSent - tally.heartbeatsAnswered
        tally.heartbeatsSent = tally.heartbeatsAnswered
        tally.heartbeatsLate = 0
        session.hasFailed = false
        session.isLoggedIn = false
        session.pendingAcknowledgements = [:]
        session.loginPositions = positions
        session.reconnectLoginTimeout = loginTimeout
        channel = nil
        socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group, eventLoop: loop)
        socket.delegate = self
        try connect(to: server, from: source)
    }

    /// Queues `message` for writing.
    func send(_ message: ChatMessage) {
        do {
            write(try wire.codec.encode(message))
        } catch {
            fail("cannot encode \(message): \(error)")
        }
    }

    /// Queues numbered message `id`, keeping it in the outbox until `stored` (with ``keepsOutbox``).
    private func send(numbered message: ChatMessage, id: UInt64) {
        let frame: Data
        do {
            frame = try wire.codec.encode(message)
        } catch {
            fail("cannot encode \(message): \(error)")
            return
        }
        if keepsOutbox { outbox[id] = frame }
        write(frame)
    }

    /// Queues bytes already encoded (a frame made by ``ChatCodec/encode(_:)``) for writing.
    func send(encoded frame: Data) {
        write(frame)
    }

    /// Writes one whole frame: as it is over TCP, as one binary message over the WebSocket. Nothing
    /// before a WebSocket connection's upgrade is answered (nothing is sent then: the login follows it).
    private func write(_ frame: Data) {
        if let channel { return channel.send(frame, tag: 0) }
        guard webSocketPath == nil else { return }
        socket.write(frame, withTimeout: -1, tag: 0)
    }

    /// Queues a direct message to `recipient` (version 2: numbered `id`; version 1: no id).
    func sendDirect(id: UInt64, to recipient: String, text: String) {
        send(
            numbered: login.version == .v2
                ? .v2(.directMessage(id: id, to: recipient, text: text)) : .directMessage(to: recipient, text: text), id: id)
    }

    /// Queues a broadcast (version 2: numbered `id`; version 1: no id).
    func sendBroadcast(id: UInt64, text: String) {
        send(numbered: login.version == .v2 ? .v2(.broadcast(id: id, text: text)) : .broadcast(text: text), id: id)
    }

    /// Queues a heartbeat in the connection's version; one still waiting for the answer to the one
    /// before is late (``heartbeatsLate``).
    func sendHeartbeat() {
        guard session.isLoggedIn else { return }
        if tally.heartbeatsSent > tally.heartbeatsAnswered { tally.heartbeatsLate += 1 }
        tally.heartbeatsSent += 1
        send(wire.codec.heartbeat)
    }

    /// Notes that every message of `conversation` up to `sequence` has arrived: a `received` for it goes
    /// out at the end of this loop pass, together with those of the other deliveries read meanwhile.
    func acknowledge(_ conversation: String, upTo sequence: UInt64) {
        let isFirst = session.pendingAcknowledgements.isEmpty
        session.pendingAcknowledgements[conversation] = max(session.pendingAcknowledgements[conversation] ?? 0, sequence)
        if isFirst { socket.eventLoop.execute { [self] in sendAcknowledgements() } }
    }

    private func sendAcknowledgements() {
        let pending = session.pendingAcknowledgements
        session.pendingAcknowledgements = [:]
        guard session.isLoggedIn, !session.isStopping else { return }
        for (conversation, sequence) in pending {
            send(.v2(.received(conversation: conversation, upTo: sequence)))
            tally.acknowledgementsSent += 1
        }
    }

    /// Closes the connection; from now on its end is not a failure.
    func close() {
        session.isStopping = true
        session.isLoggedIn = false
        socket.disconnect()
    }

    func fail(_ reason: String) {
        guard !session.hasFailed, !session.isStopping else { return }
        session.hasFailed = true
        session.isLoggedIn = false
        handler?.connection(self, didFail: "\(name): \(reason)")
        socket.disconnect()
    }

    /// The `retryAfter` of the `serverBusy` that refused the last login, once; nil if it was not refused so.
    func takeBusyRetryAfter() -> UInt64? {
        defer { busyRetryAfter = nil }
        return busyRetryAfter
    }

    func received(_ frame: SevenByteHeaderFrame) {
        let now = MonotonicClock.now()
        guard ServerEvent.decodedCodes.contains(frame.functionCode) else {
            if session.isLoggedIn { handler?.connection(self, didReceive: .ignored(functionCode: frame.functionCode), at: now) }
            return
        }
        if frame.functionCode == FunctionCode.error.rawValue {
            guard let error = ServerEvent.looseError(body: frame.body) else {
                fail("an error frame whose body is not {\"code\":…}")
                return
            }
            if session.isLoggedIn {
                if case .error(let code, _, let id?) = error {
                    if keepsOutbox, code == ChatErrorCode.storeUnavailable.rawValue, outbox[id] != nil {
                        // docs/PROTOCOL.md: keep it and resend it, and those after it, after the next
                        // reconnect: that goes to the next server, whose store may be up.
                        tally.storeRefusals += 1
                        fail("storeUnavailable for #\(id): logging in again to resend it")
                        return
                    }
                    // Refused for good: the run counts it and does not resend it.
                    outbox[id] = nil
                }
                handler?.connection(self, didReceive: error, at: now)
            } else if case .error(let code, let detail, _) = error {
                if code == ChatErrorCode.serverBusy.rawValue { busyRetryAfter = ServerEvent.retryAfter(body: frame.body) ?? 1 }
                fail("login refused: \(code): \(detail)")
            }
            return
        }
        let message: ChatMessage
        do {
            message = try wire.codec.message(from: frame)
        } catch {
            fail("undecodable message from the server: \(error)")
            return
        }
        if session.isLoggedIn {
            if frame.functionCode == FunctionCode.heartbeatAck.rawValue {
                tally.heartbeatsAnswered += 1
                tally.heartbeatsMissed += tally.heartbeatsLate
                tally.heartbeatsLate = 0
            }
            guard let event = ServerEvent(message) else {
                fail("\(message) after the login")
                return
            }
            if case .stored(let id, _) = event { outbox[id] = nil }
            handler?.connection(self, didReceive: event, at: now)
            return
        }
        switch message {
        case .loginAccepted:
            guard login.version == .v1 else {
                fail("a version 1 login answer to a version 2 login")
                return
            }
        case .v2(.loginAccepted(_, _, _, let token, let stored)):
            guard stored == (login.password != nil) else {
                fail(
                    stored
                        ? "logged in stored although no password was given"
                        : "logged in live only (stored: false) although a password was given")
                return
            }
            session.resumeToken = token
        default:
            fail("\(message) before the login was accepted")
            return
        }
        session.isLoggedIn = true
        handler?.connectionDidLogIn(self, at: now)
    }

    // MARK: - TCPSocketDelegate (loop thread)

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        if let webSocketPath { return openWebSocket(on: sock, host: host, port: port, path: webSocketPath) }
        socket.readFrames(using: SocketFrameDecoder(frameDecoder)) { [weak self, weak sock] _, frame in
            guard let self, sock === self.socket else { return }
            self.received(frame)
        }
        logIn(on: sock, host: host, port: port)
    }

    /// The frames' decoder: any function code (newer servers' messages are skipped by code, not a
    /// reason to drop the line).
    var frameDecoder: SevenByteHeaderFrameDecoder {
        SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: wire.codec.maxBodyLength, acceptedVersions: ChatCodec.versions)
    }

    /// Connected (over WebSocket: upgraded) to `host`:`port` on `sock`: the login, and the outbox after it.
    func logIn(on sock: TCPSocket, host: String, port: UInt16) {
        if let limit = session.reconnectLoginTimeout {
            let local = sock.localPort
            _ = loop.scheduleTask(in: limit) { [weak self, weak sock] in
                guard let self, let sock, sock === self.socket, !self.session.isLoggedIn else { return }
                self.fail("no login answer within \(limit) from \(host):\(port) (from local port \(local))")
            }
        }
        switch login.version {
        case .v1: send(.login(name: name, resumeToken: nil))
        // As im-client logs in: presence as one presenceChanges per tick rather than single frames.
        case .v2:
            send(
                .v2(
                    .login(
                        name: name, password: login.password, resumeToken: session.resumeToken, clientInstance: wire.clientInstance,
                        positions: session.loginPositions, presenceChanges: true)))
            // As docs/PROTOCOL.md asks after every reconnect: the outbox in id order, original ids.
            for id in outbox.keys.sorted() { if let frame = outbox[id] { send(encoded: frame) } }
            tally.messagesResent += outbox.count
        }
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        guard sock === socket else { return }  // the socket before a reconnect
        let error = channel.map { $0.transportClosed(err) } ?? err
        fail(error.map { "disconnected: \($0)" } ?? "closed by the server")
    }
}
