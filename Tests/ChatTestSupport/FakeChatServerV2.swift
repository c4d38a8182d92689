import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation
import LongLink
import TestSupport

/// A small version 2 chat server for the client's tests, doing what docs/PROTOCOL.md "Version 2" says
/// and no more: passwords (claimed on first use), `stored` answers after de-duplication by (name,
/// client instance, id), numbered deliveries to every session of both users (the sender's own
/// included, after its `stored`), positions on login (the stored messages after them are sent),
/// `received` → receipts to the other user, history. Everything in memory, on one serial queue.
///
/// Knobs for faults: ``answering`` (store but do not answer `stored`: an answer lost with the
/// connection), ``inject(_:to:)`` (any message to a user's sessions: duplicates, receipts again),
/// ``loginStoreFailures`` (logins answered `storeUnavailable`, as a node whose NATS is restarting),
/// ``loginBusyRefusals`` (logins answered `serverBusy`).
public final class FakeChatServerV2: Sendable {
    /// A stored message.
    public struct Entry: Sendable, Equatable {
        public var from: String
        public var text: String
        public var instance: String
        public var id: UInt64
    }

    private struct State {
        var passwords: [String: String?] = [:]
        var conversations: [String: [Entry]] = [:]
        var stored: [String: (conversation: String, sequence: UInt64)] = [:]  // "name instance id"
        var sessions: [Int: (name: String, session: LongLinkServer<ChatCodec>.Session)] = [:]
        var positions: [String: [String: UInt64]] = [:]  // user → conversation → acknowledged
        var answering = true
        var echoesToSender = true
        var loginStoreFailures = 0
        var loginBusyRefusals = 0
    }

    /// The time of message `sequence` in every conversation: 2023-11-14 22:13:20.000 UTC plus `sequence` ms.
    public static func time(of sequence: UInt64) -> Date { Date(timeIntervalSince1970: 1_700_000_000 + Double(sequence) / 1000) }

    private let state = LockedValue(State())
    private let queue = DispatchQueue(label: "FakeChatServerV2")
    private let server: LongLinkServer<ChatCodec>
    /// Every message received from a client (heartbeats excepted), as "name: message" (the name once
    /// logged in, "?" before).
    public let log = EventRecorder<String>()
    /// The login messages received, passwords included.
    public let logins = EventRecorder<ChatMessageV2>()

    /// A server on 127.0.0.1:`port` (0: a free one; with `sharedPort` it binds with `SO_REUSEPORT`,
    /// taking over a ``ReservedLoopbackPort``), knowing `users` already (name → password, nil: live only).
    public init(port: UInt16 = 0, sharedPort: Bool = false, users: [String: String?] = [:], group: EventLoopGroup) throws {
        var configuration = LongLinkServer<ChatCodec>.Configuration(port: port)
        configuration.isReusePortEnabled = sharedPort
        let holder = LockedValue<FakeChatServerV2?>(nil)
        server = LongLinkServer(codec: ChatCodec(version: .v2), configuration: configuration, group: group, eventQueue: queue) { event in
            holder.withLock { $0 }?.handle(event)
        }
        state.withLock { $0.passwords = users }
        holder.withLock { $0 = self }
        try server.start()
    }

    public var port: UInt16 { server.port }

    public func stop() { server.stop() }

    /// Whether numbered messages are answered with `stored` (they are stored and de-duplicated either way).
    public var answering: Bool {
        get { state.withLock { $0.answering } }
        set { state.withLock { $0.answering = newValue } }
    }

    /// How many of the next logins are answered `storeUnavailable` (no `retryAfter`, as im-server does).
    public var loginStoreFailures: Int {
        get { state.withLock { $0.loginStoreFailures } }
        set { state.withLock { $0.loginStoreFailures = newValue } }
    }

    /// How many of the next logins are answered `serverBusy` with `retryAfter` 1 (as im-server does
    /// when too many logins wait).
    public var loginBusyRefusals: Int {
        get { state.withLock { $0.loginBusyRefusals } }
        set { state.withLock { $0.loginBusyRefusals = newValue } }
    }

    /// Whether a stored message is delivered to the session that sent it too (the sender's other
    /// sessions get it either way).
    public var echoesToSender: Bool {
        get { state.withLock { $0.echoesToSender } }
        set { state.withLock { $0.echoesToSender = newValue } }
    }

    /// The messages stored in `conversation`, in order.
    public func messages(in conversation: String) -> [Entry] { state.withLock { $0.conversations[conversation] ?? [] } }

    /// Sends `message` to every session of `user`, on the server's queue (after what it is doing).
    public func inject(_ message: ChatMessage, to user: String) {
        queue.async { [self] in
            for session in sessions(of: user) { session.send(message) }
        }
    }

    private func sessions(of user: String) -> [LongLinkServer<ChatCodec>.Session] {
        state.withLock { $0.sessions.values.filter { $0.name == user }.map(\.session) }
    }

    private func handle(_ event: LongLinkServer<ChatCodec>.Event) {
        switch event {
        case .opened, .closed(_, _), .refused:
            if case .closed(let session, _) = event { _ = state.withLock { $0.sessions.removeValue(forKey: session.id) } }
        case .sendFailed(let message, let reason, _):
            log.record("not sent: \(message) (\(reason))")
        case .received(let message, let session):
            let name = state.withLock { $0.sessions[session.id]?.name }
            log.record("\(name ?? "?"): \(message)")
            guard case .v2(let body) = message else {
                session.send(.error(code: .badRequest, detail: "version 1 is not served here"))
                return
            }
            if let name { handle(body, from: name, session) } else { login(body, session) }
        }
    }

    private func login(_ message: ChatMessageV2, _ session: LongLinkServer<ChatCodec>.Session) {
        guard case .login(let name, let password, _, let client, let positions, _) = message else {
            let id: UInt64? =
                switch message {
                case .directMessage(let id, _, _), .broadcast(let id, _): id
                default: nil
                }
            session.send(.v2(.error(code: .notLoggedIn, detail: "log in first", id: id, retryAfter: nil)))
            return
        }
        logins.record(message)
        let storeFails = state.withLock { state -> Bool in
            guard state.loginStoreFailures > 0 else { return false }
            state.loginStoreFailures -= 1
            return true
        }
        let busy = state.withLock { state -> Bool in
            guard state.loginBusyRefusals > 0 else { return false }
            state.loginBusyRefusals -= 1
            return true
        }
        guard !busy else {
            session.send(.v2(.error(code: .serverBusy, detail: "3 logins are waiting; try again in 1 s", id: nil, retryAfter: 1)))
            return
        }
        guard !storeFails else {
            session.send(
                .v2(.error(code: .storeUnavailable, detail: "the message store failed; try again later", id: nil, retryAfter: nil)))
            return
        }
        session.context = client
        let refused = state.withLock { state -> Bool in
            if let known = state.passwords[name], let claimed = known, claimed != password { return true }
            if state.passwords[name] == nil || state.passwords[name] == .some(nil) { state.passwords[name] = .some(password) }
            return false
        }
        guard !refused else {
            session.send(.v2(.error(code: .badPassword, detail: "wrong password for \(name)", id: nil, retryAfter: nil)))
            return
        }
        let (online, backlog) = state.withLock { state -> ([String], [ChatMessage]) in
            let online = Set(state.sessions.values.map(\.name)).subtracting([name]).sorted()
            state.sessions[session.id] = (name, session)
            var backlog: [ChatMessage] = []
            guard password != nil else { return (online, backlog) }
            for (conversation, entries) in state.conversations.sorted(by: { $0.key < $1.key })
            where conversation == "room" || ConversationID(conversation)?.hasMember(name) == true {
                let after = positions[conversation] ?? state.positions[name]?[conversation] ?? 0
                for (index, entry) in entries.enumerated() where UInt64(index + 1) > after {
                    backlog.append(Self.delivery(entry, conversation: conversation, sequence: UInt64(index + 1)))
                }
            }
            return (online, backlog)
        }
        session.send(
            .v2(
                .loginAccepted(
                    name: name, online: online, onlineCount: online.count, resumeToken: "token-\(name)",
                    stored: password != nil)))
        for delivery in backlog { session.send(delivery) }
    }

    private static func delivery(_ entry: Entry, conversation: String, sequence: UInt64) -> ChatMessage {
        .v2(
            .delivery(
                from: entry.from, text: entry.text, isDirect: conversation != "room", conversation: conversation,
                sequence: sequence, time: time(of: sequence)))
    }

    private func handle(_ message: ChatMessageV2, from name: String, _ session: LongLinkServer<ChatCodec>.Session) {
        switch message {
        case .directMessage(let id, let to, let text):
            guard state.withLock({ $0.passwords[to] != nil }) else {
                session.send(.v2(.error(code: .unknownRecipient, detail: "nobody is called \(to)", id: id, retryAfter: nil)))
                return
            }
            store(id: id, text: text, from: name, in: ConversationID(between: name, and: to).description, session)
        case .broadcast(let id, let text):
            store(id: id, text: text, from: name, in: "room", session)
        case .received(let conversation, let upTo):
            state.withLock { state in
                state.positions[name, default: [:]][conversation] = max(state.positions[name]?[conversation] ?? 0, upTo)
            }
            if case .direct(let first, let second)? = ConversationID(conversation) {
                let other = first == name ? second : first
                for receiver in sessions(of: other) { receiver.send(.v2(.receipt(conversation: conversation, upTo: upTo, by: name))) }
            }
        case .historyRequest(let conversation, let limit):
            let entries = messages(in: conversation)
            let first = max(entries.count - limit, 0)
            let history = entries[first...].enumerated().map { offset, entry in
                let sequence = UInt64(first + offset + 1)
                return ChatHistoryEntry(sequence: sequence, from: entry.from, text: entry.text, time: Self.time(of: sequence))
            }
            session.send(.v2(.history(conversation: conversation, messages: history)))
        default:
            session.send(.v2(.error(code: .badRequest, detail: "not for a server", id: nil, retryAfter: nil)))
        }
    }

    /// Stores (once per name, instance and id), answers `stored`, delivers to both users' sessions.
    private func store(
        id: UInt64, text: String, from name: String, in conversation: String,
        _ session: LongLinkServer<ChatCodec>.Session
    ) {
        let (sequence, isNew, answering) = state.withLock { state -> (UInt64, Bool, Bool) in
            let client = clientInstance(of: session) ?? ""
            let key = "\(name) \(client) \(id)"
            if let known = state.stored[key] { return (known.sequence, false, state.answering) }
            state.conversations[conversation, default: []].append(Entry(from: name, text: text, instance: client, id: id))
            let sequence = UInt64(state.conversations[conversation]?.count ?? 0)
            state.stored[key] = (conversation, sequence)
            return (sequence, true, state.answering)
        }
        if answering { session.send(.v2(.stored(id: id, conversation: conversation, sequence: sequence))) }
        guard isNew else { return }
        let entry = Entry(from: name, text: text, instance: clientInstance(of: session) ?? "", id: id)
        let delivery = Self.delivery(entry, conversation: conversation, sequence: sequence)
        let receivers: [LongLinkServer<ChatCodec>.Session] = state.withLock { state in
            state.sessions.values.filter { member in
                (conversation == "room" || ConversationID(conversation)?.hasMember(member.name) == true)
                    && (state.echoesToSender || member.session !== session)
            }.sorted { $0.session.id < $1.session.id }.map(\.session)
        }
        for receiver in receivers { receiver.send(delivery) }
    }

    private func clientInstance(of session: LongLinkServer<ChatCodec>.Session) -> String? {
        session.context as? String
    }
}
