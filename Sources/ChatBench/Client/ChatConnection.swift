import SocketBench
import AsyncSocket
import ChatProtocol
import FramedSocket
import Foundation
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
    /// Keep numbered messages until `stored` and resend them after a reconnect. Default false.
    var keepsOutbox = false
    /// Numbered messages sent and not yet answered with `stored`, by id (only with ``keepsOutbox``).
    private(set) var outbox: [UInt64: Data] = [:]
    /// The last login answer's resume token, sent with the next login.
    private var resumeToken: String?
    /// Positions sent with the next login (docs/PROTOCOL.md "Receiving").
    private var loginPositions: [String: UInt64] = [:]
    private let group: EventLoopGroup, loop: EventLoop
    private let codec: ChatCodec
    private let clientInstance: String
    private weak var handler: (any ChatConnectionHandler)?
    private var isStopping = false
    private var hasFailed = false
    /// Logged in and not yet closed.
    private(set) var isLoggedIn = false
    /// Highest sequence number acknowledgeable per conversation, waiting for the end of the loop pass.
    private var pendingAcknowledgements: [String: UInt64] = [:]
    /// `received` messages sent.
    private(set) var acknowledgementsSent = 0
    /// Heartbeats sent and their answers.
    private(set) var heartbeatsSent = 0, heartbeatsAnswered = 0
    /// Heartbeats left unanswered by connections that dropped (counted at each reconnect).
    private(set) var heartbeatsLost = 0
    /// Heartbeats still unanswered when the next one was due, on connections that answered again
    /// afterwards: missed. ``heartbeatsLate`` are those not yet confirmed: the connection has not
    /// answered since; they become missed with its next answer, or lost with it at a reconnect.
    private(set) var heartbeatsMissed = 0, heartbeatsLate = 0
    /// With ``keepsOutbox``: `storeUnavailable` answers to messages kept for the next reconnect (each
    /// ends the connection), and messages resent from the outbox after a reconnect.
    private(set) var storeRefusals = 0, messagesResent = 0
    /// When the connect started (nanoseconds on ``MonotonicClock``; 0 before).
    private(set) var connectStart: UInt64 = 0
    /// How long the login after a ``reconnect(to:from:positions:loginTimeout:)`` may go unanswered
    /// once connected; then the attempt fails ("no login answer within …"), as a client's login
    /// deadline would end it.
    private var reconnectLoginTimeout: Duration?

    init(index: Int, name: String, login: ChatLogin = .stored, loop: EventLoop, group: EventLoopGroup, handler: any ChatConnectionHandler) {
        self.index = index
        self.name = name
        self.login = login
        self.handler = handler
        codec = ChatCodec(version: login.version)
        clientInstance = ChatConnection.randomClientInstance()
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
        connectStart = MonotonicClock.now()
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
        heartbeatsLost += heartbeatsSent - heartbeatsAnswered
        heartbeatsSent = heartbeatsAnswered
        heartbeatsLate = 0
        hasFailed = false
        isLoggedIn = false
        pendingAcknowledgements = [:]
        loginPositions = positions
        reconnectLoginTimeout = loginTimeout
        socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group, eventLoop: loop)
        socket.delegate = self
        try connect(to: server, from: source)
    }

    /// Queues `message` for writing.
    func send(_ message: ChatMessage) {
        do {
            socket.write(try codec.encode(message), withTimeout: -1, tag: 0)
        } catch {
            fail("cannot encode \(message): \(error)")
        }
    }

    /// Queues numbered message `id`, keeping it in the outbox until `stored` (with ``keepsOutbox``).
    private func send(numbered message: ChatMessage, id: UInt64) {
        let frame: Data
        do {
            frame = try codec.encode(message)
        } catch {
            fail("cannot encode \(message): \(error)")
            return
        }
        if keepsOutbox { outbox[id] = frame }
        socket.write(frame, withTimeout: -1, tag: 0)
    }

    /// Queues bytes already encoded (a frame made by ``ChatCodec/encode(_:)``) for writing.
    func send(encoded frame: Data) {
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
        guard isLoggedIn else { return }
        if heartbeatsSent > heartbeatsAnswered { heartbeatsLate += 1 }
        heartbeatsSent += 1
        send(codec.heartbeat)
    }

    /// Notes that every message of `conversation` up to `sequence` has arrived: a `received` for it goes
    /// out at the end of this loop pass, together with those of the other deliveries read meanwhile.
    func acknowledge(_ conversation: String, upTo sequence: UInt64) {
        let isFirst = pendingAcknowledgements.isEmpty
        pendingAcknowledgements[conversation] = max(pendingAcknowledgements[conversation] ?? 0, sequence)
        if isFirst { socket.eventLoop.execute { [self] in sendAcknowledgements() } }
    }

    private func sendAcknowledgements() {
        let pending = pendingAcknowledgements
        pendingAcknowledgements = [:]
        guard isLoggedIn, !isStopping else { return }
        for (conversation, sequence) in pending {
            send(.v2(.received(conversation: conversation, upTo: sequence)))
            acknowledgementsSent += 1
        }
    }

    /// Closes the connection; from now on its end is not a failure.
    func close() {
        isStopping = true
        isLoggedIn = false
        socket.disconnect()
    }

    private func fail(_ reason: String) {
        guard !hasFailed, !isStopping else { return }
        hasFailed = true
        isLoggedIn = false
        handler?.connection(self, didFail: "\(name): \(reason)")
        socket.disconnect()
    }

    private func received(_ frame: SevenByteHeaderFrame) {
        let now = MonotonicClock.now()
        guard ServerEvent.decodedCodes.contains(frame.functionCode) else {
            if isLoggedIn { handler?.connection(self, didReceive: .ignored(functionCode: frame.functionCode), at: now) }
            return
        }
        if frame.functionCode == FunctionCode.error.rawValue {
            guard let error = ServerEvent.looseError(body: frame.body) else {
                fail("an error frame whose body is not {\"code\":…}")
                return
            }
            if isLoggedIn {
                if case .error(let code, _, let id?) = error {
                    if keepsOutbox, code == ChatErrorCode.storeUnavailable.rawValue, outbox[id] != nil {
                        // docs/PROTOCOL.md: keep it and resend it, and those after it, after the next
                        // reconnect: that goes to the next server, whose store may be up.
                        storeRefusals += 1
                        fail("storeUnavailable for #\(id): logging in again to resend it")
                        return
                    }
                    // Refused for good: the run counts it and does not resend it.
                    outbox[id] = nil
                }
                handler?.connection(self, didReceive: error, at: now)
            } else if case .error(let code, let detail, _) = error {
                fail("login refused: \(code): \(detail)")
            }
            return
        }
        let message: ChatMessage
        do {
            message = try codec.message(from: frame)
        } catch {
            fail("undecodable message from the server: \(error)")
            return
        }
        if isLoggedIn {
            if frame.functionCode == FunctionCode.heartbeatAck.rawValue {
                heartbeatsAnswered += 1
                heartbeatsMissed += heartbeatsLate
                heartbeatsLate = 0
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
            resumeToken = token
        default:
            fail("\(message) before the login was accepted")
            return
        }
        isLoggedIn = true
        handler?.connectionDidLogIn(self, at: now)
    }

    // MARK: - TCPSocketDelegate (loop thread)

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        // Any function code: newer servers' messages are skipped by code, not a reason to drop the line.
        let decoder = SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: codec.maxBodyLength, acceptedVersions: ChatCodec.versions)
        socket.readFrames(using: SocketFrameDecoder(decoder)) { [weak self, weak sock] _, frame in
            guard let self, sock === self.socket else { return }
            self.received(frame)
        }
        if let limit = reconnectLoginTimeout {
            let local = sock.localPort
            _ = loop.scheduleTask(in: limit) { [weak self, weak sock] in
                guard let self, let sock, sock === self.socket, !self.isLoggedIn else { return }
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
                        name: name, password: login.password, resumeToken: resumeToken, clientInstance: clientInstance,
                        positions: loginPositions, presenceChanges: true)))
            // As docs/PROTOCOL.md asks after every reconnect: the outbox in id order, original ids.
            for id in outbox.keys.sorted() { if let frame = outbox[id] { send(encoded: frame) } }
            messagesResent += outbox.count
        }
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        guard sock === socket else { return }  // the socket before a reconnect
        fail(err.map { "disconnected: \($0)" } ?? "closed by the server")
    }
}
