import AsyncSocket
import ChatProtocol
import ChatServer
import Foundation
import LongLink
import TestSupport

/// A chat server whose presence ticks the test drives (``ChatServer/flushPresence()``; no timer, no
/// sleeps), or with the real 200 ms ticker; peers of both versions on it.
public final class PresenceFixture: Sendable {
    public let log = EventRecorder<String>()
    public let server: ChatServer
    public let group = EventLoopGroup(numberOfThreads: 1, name: "presence-fixture")

    public init(presenceInterval: Duration? = nil) throws {
        let log = self.log
        server = ChatServer(host: "127.0.0.1", port: 0, presenceInterval: presenceInterval, group: group, logger: .recording(into: log))
        try server.start()
    }

    /// A version 2 peer logging in as `name` without a password (live only), asking for
    /// `presenceChanges` batches or not; its login answer not yet awaited.
    public func v2(_ name: String, batches: Bool) -> V2Peer {
        let peer = V2Peer(port: server.port, group: group)
        peer.send(
            .login(
                name: name, password: nil, resumeToken: nil, clientInstance: String(repeating: "cd", count: 16),
                positions: [:], presenceChanges: batches))
        return peer
    }

    /// `v2(_:batches:)`, its login answer awaited.
    public func loggedIn(_ name: String, batches: Bool) async throws -> V2Peer {
        let peer = v2(name, batches: batches)
        try await peer.acceptedLogin()
        return peer
    }

    /// A version 1 peer logged in as `name`.
    public func v1(_ name: String) async throws -> V1Peer {
        let peer = V1Peer(port: server.port, group: group)
        peer.link.send(.login(name: name, resumeToken: nil))
        let answer = try await peer.received.next()
        guard case .loginAccepted = answer else { throw WaitTimedOut(description: "login of \(name): \(answer)") }
        return peer
    }

    /// Waits until the server has logged `count` logouts (after the ones waited for before).
    public func logouts(_ count: Int) async throws {
        _ = try await log.next(count) { $0.hasPrefix("logout ") }
    }

    deinit {
        server.stop()
        group.shutdown()
    }
}

/// A version 1 client that says exactly what a test tells it.
public final class V1Peer: Sendable {
    public let received = EventRecorder<ChatMessage>()
    public let link: LongLinkClient<ChatCodec>

    public init(port: UInt16, group: EventLoopGroup) {
        let received = self.received
        link = LongLinkClient(
            codec: ChatCodec(), configuration: .init(host: "127.0.0.1", port: port), group: group,
            eventQueue: nil
        ) { event in
            if case .received(let message) = event { received.record(message) }
        }
        link.connect()
    }

    /// Everything the server sent before the answer to a message sent now (a second login, answered
    /// `alreadyLoggedIn` after everything sent before it).
    public func drain() async throws -> [ChatMessage] {
        link.send(.login(name: "again", resumeToken: nil))
        var messages: [ChatMessage] = []
        while true {
            let message = try await received.next()
            if case .error(.alreadyLoggedIn, _) = message { return messages }
            messages.append(message)
        }
    }

    deinit { link.disconnect() }
}

extension V2Peer {
    /// Waits for the login's answer, which must be `login accepted`.
    public func acceptedLogin() async throws {
        let answer = try await received.next(within: .seconds(30))
        guard case .v2(.loginAccepted) = answer else { throw WaitTimedOut(description: "login answered \(answer)") }
    }

    /// Everything the server sent before the answer to a `who` sent now (answers come in order).
    public func drain() async throws -> [ChatMessageV2] {
        send(.who(after: nil, limit: 1))
        var messages: [ChatMessageV2] = []
        while true {
            guard case .v2(let message) = try await received.next() else { continue }
            if case .onlineUsers = message { return messages }
            messages.append(message)
        }
    }

    /// The answer to `who(after:limit:)`.
    public func who(after: String?, limit: Int) async throws -> ChatMessageV2? {
        send(.who(after: after, limit: limit))
        return try await next()
    }
}

public func names(_ range: ClosedRange<Int>) -> [String] { range.map { String(format: "u%03d", $0) } }
