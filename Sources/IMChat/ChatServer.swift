import AsyncSocket
import Dispatch
import Foundation
import LongLink

/// The instant-messaging server (MISSION M6): users log in by name, send to one user or to everyone,
/// and receive what others send them, over long connections kept alive by heartbeats.
///
/// Routing state (who is logged in as what) lives on one serial queue, the queue the underlying
/// ``LongLinkServer`` delivers its events on, so it needs no locks. Log lines go to `log` on that queue:
/// `login NAME from ADDRESS`, `resume NAME from ADDRESS`, `logout NAME (closed by client)` and
/// `drop NAME (CAUSE)` (or `drop ADDRESS (CAUSE)` before a login).
///
/// Given a discovery configuration, it also answers LAN discovery (``DiscoveryResponder``,
/// docs/PROTOCOL.md "Finding the server") with its address, port, name and number of users online.
public final class ChatServer: Sendable {
    /// Longest user name accepted, in characters.
    public static let maxNameLength = 32
    /// Most names listed in a ``ChatMessage/loginAccepted(name:online:onlineCount:resumeToken:)``, so
    /// the reply stays small however many users are online.
    public static let maxOnlineListed = 100

    private let queue = DispatchQueue(label: "IMChat.ChatServer")
    private let link: LongLinkServer<ChatCodec>
    private let router: Router
    private let responder: DiscoveryResponder?

    /// A server that will listen on `host` (nil = every interface) and `port` (0 = a free port) and
    /// drop clients silent for `idleTimeout`; with a `discovery` configuration (default `nil`: none) it
    /// answers discovery queries too, from the time it starts.
    public init(
        host: String?,
        port: UInt16,
        idleTimeout: Duration = .seconds(360),
        discovery: DiscoveryResponder.Configuration? = nil,
        group: EventLoopGroup = .shared,
        log: @escaping @Sendable (String) -> Void
    ) {
        var configuration = LongLinkServer<ChatCodec>.Configuration(host: host, port: port)
        configuration.idleTimeout = idleTimeout
        let router = Router(log: log)
        self.router = router
        link = LongLinkServer(codec: ChatCodec(), configuration: configuration, group: group, eventQueue: queue) { event in
            router.handle(event)
        }
        router.link = link
        // Answers are made on the routing queue, where the count of users may be read.
        let queue = self.queue
        responder = discovery.map { configuration in
            DiscoveryResponder(configuration: configuration, queue: queue, group: group) { router.users.count }
        }
    }

    /// Starts listening, then answering discovery (when configured), advertising the address listened on
    /// as ``DiscoveryResponder/interfaces(forListeningOn:)`` says.
    /// - Throws: ``SocketError`` (`EADDRINUSE`, for example); when discovery cannot start, the listener
    ///   is stopped again.
    public func start() throws(SocketError) {
        try link.start()
        guard let responder else { return }
        let (interfaces, advertisedHost) = link.localAddress.map(DiscoveryResponder.interfaces(forListeningOn:))
            ?? ([nil, "127.0.0.1"], "")
        do {
            try responder.start(advertisedHost: advertisedHost, tcpPort: link.port, interfaces: interfaces)
        } catch {
            link.stop()
            throw error
        }
    }

    /// The UDP port discovery is answered on, once started; `nil` without discovery.
    public var discoveryPort: UInt16? { responder?.port }

    /// What discovery has answered and ignored so far; `nil` without discovery.
    public var discoveryStatistics: DiscoveryResponder.Statistics? { responder?.statistics }

    /// The port listened on, once started.
    public var port: UInt16 { link.port }

    /// The address listened on, once started (`127.0.0.1:7777`, `[::1]:7777`).
    public var localAddress: SocketAddress? { link.localAddress }

    /// Stops listening and answering discovery, and closes every connection.
    public func stop() {
        responder?.stop()
        link.stop()
    }

    /// Names of the users logged in now, sorted. Waits for the routing queue.
    public var onlineUsers: [String] { queue.sync { router.users.keys.sorted() } }
}

/// Who is logged in, and what to do with each message (internal for tests). Unchecked: used on the
/// server's queue only
/// (`link` is set once, before the server starts).
final class Router: @unchecked Sendable {
    typealias Session = LongLinkServer<ChatCodec>.Session

    struct User {
        let session: Session
        let resumeToken: String
    }

    let log: @Sendable (String) -> Void
    weak var link: LongLinkServer<ChatCodec>?
    var users: [String: User] = [:]

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    func name(of session: Session) -> String? { session.context as? String }

    func handle(_ event: LongLinkServer<ChatCodec>.Event) {
        switch event {
        case .opened:
            break
        case .received(let message, let session):
            handle(message, from: session)
        case .closed(let session, let reason):
            guard let name = name(of: session) else {
                if reason != .byClient { log("drop \(session.remoteAddress?.description ?? "?") (\(reason))") }
                return
            }
            guard users[name]?.session === session else { return }
            users[name] = nil
            log(reason == .byClient ? "logout \(name) (\(reason))" : "drop \(name) (\(reason))")
            send(.presence(name: name, online: false), toAllBut: nil)
        }
    }

    func handle(_ message: ChatMessage, from session: Session) {
        if case .v2(let message) = message {
            // Version 2 decodes (issue 11) but is not served yet: answered in version 2.
            session.send(.v2(.error(code: .badRequest, detail: "protocol version 2 is not served yet (\(message.functionCode))",
                                    id: nil, retryAfter: nil)))
            return
        }
        if case .login(let name, let token) = message {
            login(name, token: token, session: session)
            return
        }
        guard let sender = name(of: session) else {
            session.send(.error(code: .notLoggedIn, detail: "log in first"))
            return
        }
        switch message {
        case .directMessage(let recipient, let text):
            guard !text.allSatisfy(\.isWhitespace) else {
                session.send(.error(code: .badRequest, detail: "empty message"))
                return
            }
            guard let user = users[recipient] else {
                session.send(.error(code: .unknownRecipient, detail: "no user named \(recipient) is online"))
                return
            }
            user.session.send(.delivery(from: sender, text: text, isDirect: true))
        case .broadcast(let text):
            guard !text.allSatisfy(\.isWhitespace) else {
                session.send(.error(code: .badRequest, detail: "empty message"))
                return
            }
            send(.delivery(from: sender, text: text, isDirect: false), toAllBut: sender)
        case .login, .heartbeat, .v2:
            break  // handled above and by the link layer
        case .loginAccepted, .delivery, .presence, .heartbeatAck, .error:
            session.send(.error(code: .badRequest, detail: "only the server sends \(message.functionCode)"))
        }
    }

    func login(_ name: String, token: String?, session: Session) {
        guard self.name(of: session) == nil else {
            session.send(.error(code: .alreadyLoggedIn, detail: "this connection is logged in already"))
            return
        }
        guard Router.isValid(name) else {
            session.send(.error(code: .invalidName, detail: "a name is 1 to \(ChatServer.maxNameLength) characters, no spaces"))
            return
        }
        let address = session.remoteAddress?.description ?? "?"
        if let existing = users[name] {
            guard let token, token == existing.resumeToken else {
                session.send(.error(code: .nameTaken, detail: "\(name) is already logged in"))
                return
            }
            // The same client again, over a new connection: its old session is stale.
            existing.session.context = nil
            existing.session.send(.error(code: .replaced, detail: "logged in again from another connection"))
            existing.session.close()
            log("resume \(name) from \(address)")
        } else {
            log("login \(name) from \(address)")
        }
        let resumeToken = token ?? UUID().uuidString
        session.context = name
        let isNew = users[name] == nil
        users[name] = User(session: session, resumeToken: resumeToken)
        let others = users.keys.filter { $0 != name }.sorted()
        session.send(.loginAccepted(
            name: name, online: Array(others.prefix(ChatServer.maxOnlineListed)),
            onlineCount: others.count, resumeToken: resumeToken))
        if isNew { send(.presence(name: name, online: true), toAllBut: name) }
    }

    /// Sends `message` to every logged-in user but `excluded`, encoding it once.
    func send(_ message: ChatMessage, toAllBut excluded: String?) {
        link?.send(message, to: users.lazy.filter { $0.key != excluded }.map(\.value.session))
    }

    /// 1 to 32 characters, none of them whitespace, control or invisible formatting (such as a
    /// zero-width space), so names cannot be confused with one another.
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= ChatServer.maxNameLength
            && !name.unicodeScalars.contains {
                $0.properties.isWhitespace || [.control, .format].contains($0.properties.generalCategory)
            }
    }
}
