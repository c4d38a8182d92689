import AsyncSocket
import ChatProtocol
import Foundation
import LongLink
import TestSupport

/// A version 2 client that says exactly what a test tells it (a plain LongLinkClient: no outbox, no
/// automatic acknowledgements), recording what the server sends with delivery and history times zeroed.
public final class V2Peer: Sendable {
    public let received = EventRecorder<ChatMessage>()
    public let link: LongLinkClient<ChatCodec>

    public convenience init(port: UInt16, group: EventLoopGroup) {
        self.init(endpoint: Endpoint(host: "127.0.0.1", port: port), group: group)
    }

    /// A peer of the server at `endpoint`: TCP, or a WebSocket URL (`ws://127.0.0.1:P/chat`); with
    /// `tls` (client settings), over TLS (`wss://` for a WebSocket URL).
    public init(endpoint: Endpoint, tls: TLSConfiguration? = nil, group: EventLoopGroup) {
        let received = self.received
        var configuration = LongLinkClient<ChatCodec>.Configuration(endpoints: [endpoint])
        configuration.tls = tls
        link = LongLinkClient(
            codec: ChatCodec(version: .v2), configuration: configuration,
            group: group, eventQueue: nil
        ) { event in
            if case .received(let message) = event { received.record(V2Peer.timeless(message)) }
        }
        link.connect()
    }

    public func send(_ message: ChatMessageV2) { link.send(.v2(message)) }

    public func login(_ name: String, password: String?, positions: [String: UInt64] = [:], token: String? = nil) {
        send(
            .login(
                name: name, password: password, resumeToken: token, clientInstance: String(repeating: "ab", count: 16),
                positions: positions))
    }

    /// The next message, which must be a version 2 one.
    public func next() async throws -> ChatMessageV2? {
        if case .v2(let message) = try await received.next() { return message }
        return nil
    }

    public func next(_ count: Int) async throws -> [ChatMessageV2?] {
        try await received.next(count).map { if case .v2(let message) = $0 { message } else { nil } }
    }

    /// The next `count` messages that are not presence news (a peer's logout may be handled after the
    /// next peer's login, so its news can come at any point).
    public func nextSkippingPresence(_ count: Int) async throws -> [ChatMessage] {
        try await received.next(count) { if case .v2(.presence) = $0 { false } else { true } }
    }

    /// Logs in and returns the login's answer, skipping presence messages of others.
    public func loggedIn(_ name: String, password: String?, positions: [String: UInt64] = [:]) async throws -> ChatMessageV2? {
        login(name, password: password, positions: positions)
        let answer = try await received.first { if case .v2(.presence) = $0 { false } else { true } }
        if case .v2(let message) = answer { return message }
        return nil
    }

    public static func timeless(_ message: ChatMessage) -> ChatMessage {
        switch message {
        case .v2(.delivery(let from, let text, let isDirect, let conversation, let sequence, _)):
            return .v2(
                .delivery(
                    from: from, text: text, isDirect: isDirect, conversation: conversation, sequence: sequence,
                    time: Date(timeIntervalSince1970: 0)))
        case .v2(.history(let conversation, let messages)):
            return .v2(
                .history(
                    conversation: conversation,
                    messages: messages.map {
                        ChatHistoryEntry(sequence: $0.sequence, from: $0.from, text: $0.text, time: Date(timeIntervalSince1970: 0))
                    }))
        default:
            return message
        }
    }

    deinit { link.disconnect() }
}
