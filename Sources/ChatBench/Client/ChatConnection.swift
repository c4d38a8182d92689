import SocketBench
import AsyncSocket
import FramedSocket
import Foundation
import IMChat
import SocketFraming

/// What a ``ChatConnection`` tells the run that owns it. Every call comes on the client's event-loop
/// thread, with the time (``MonotonicClock``, nanoseconds) read when the frame was decoded.
protocol ChatConnectionHandler: AnyObject {
    /// The server accepted the connection's version 2 login as a stored session.
    func connectionDidLogIn(_ connection: ChatConnection, at now: UInt64)
    /// A version 2 message from the server other than the login's answer.
    func connection(_ connection: ChatConnection, didReceive message: ChatMessageV2, at now: UInt64)
    /// The connection failed: refused login, connect error, protocol error, or closed by the server
    /// while the run still needed it. Called at most once per connection, never after ``ChatConnection/close()``.
    func connection(_ connection: ChatConnection, didFail reason: String)
}

/// One chat client connection of a bench run, speaking version 2 of the chat protocol
/// (docs/PROTOCOL.md "Version 2") on a ``TCPSocket`` with no delegate queue: it connects, logs in
/// with a password (a stored session: numbered deliveries, `stored` answers), hands every decoded
/// message to its ``ChatConnectionHandler``, and acknowledges deliveries cumulatively, one `received`
/// per conversation per loop pass, as docs/PROTOCOL.md asks of clients.
///
/// Everything after ``connect(host:port:)`` runs on the connection's event-loop thread (hence the
/// unchecked Sendable); so must every call of its methods.
final class ChatConnection: TCPSocketDelegate, @unchecked Sendable {
    /// Position of the connection in its run (which sender or receiver it is).
    let index: Int
    /// The user name it logs in as.
    let name: String
    let socket: TCPSocket
    private let codec = ChatCodec(version: .v2)
    private let password: String
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

    init(index: Int, name: String, password: String, loop: EventLoop, group: EventLoopGroup, handler: any ChatConnectionHandler) {
        self.index = index
        self.name = name
        self.password = password
        self.handler = handler
        clientInstance = ChatConnection.randomClientInstance()
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

    /// Starts connecting; the login follows once connected. Any thread.
    /// - Throws: ``SocketError`` when the connect cannot start.
    func connect(host: String, port: UInt16) throws(SocketError) {
        try socket.connect(toHost: host, onPort: port, withTimeout: 30)
    }

    /// Queues `message` for writing.
    func send(_ message: ChatMessageV2) {
        do {
            socket.write(try codec.encode(.v2(message)), withTimeout: -1, tag: 0)
        } catch {
            fail("cannot encode \(message): \(error)")
        }
    }

    /// Queues bytes already encoded (a frame made by ``ChatCodec/encode(_:)``) for writing.
    func send(encoded frame: Data) {
        socket.write(frame, withTimeout: -1, tag: 0)
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
            send(.received(conversation: conversation, upTo: sequence))
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
        let message: ChatMessage
        do {
            message = try codec.message(from: frame)
        } catch {
            fail("undecodable message from the server: \(error)")
            return
        }
        guard case .v2(let v2) = message else {
            fail("a version 1 message on a version 2 connection: \(message)")
            return
        }
        guard isLoggedIn else {
            switch v2 {
            case .loginAccepted(_, _, _, _, let stored):
                guard stored else {
                    fail("logged in live only (stored: false) although a password was given")
                    return
                }
                isLoggedIn = true
                handler?.connectionDidLogIn(self, at: now)
            case .error(let code, let detail, _, _):
                fail("login refused: \(code.rawValue): \(detail)")
            default:
                fail("\(v2) before the login was accepted")
            }
            return
        }
        handler?.connection(self, didReceive: v2, at: now)
    }

    // MARK: - TCPSocketDelegate (loop thread)

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        socket.readFrames(using: SocketFrameDecoder(codec.makeDecoder())) { [weak self] _, frame in
            self?.received(frame)
        }
        send(.login(name: name, password: password, resumeToken: nil, clientInstance: clientInstance, positions: [:]))
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        fail(err.map { "disconnected: \($0)" } ?? "closed by the server")
    }
}
