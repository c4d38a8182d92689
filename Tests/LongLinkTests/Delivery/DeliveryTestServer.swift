import AsyncSocket
import Dispatch
import Foundation
import LongLink
import TestSupport

/// A small reliable server for the tests, on ``NumberedTextCodec``: stores numbered messages once per
/// id (a resend is answered `stored` again but not stored twice), keeps per-conversation logs and, at
/// each login, sends every conversation's messages after the client's positions. Faults are switched
/// on by the test: no `stored` answers (lost acknowledgements), messages appended but not sent (lost
/// deliveries), raw messages (duplicates, reordering), closing every session.
final class DeliveryTestServer: Sendable {
    private struct State {
        var storedIDs: Set<UInt64> = []
        var stored: [String] = []
        var logs: [String: [String]] = [:]
        var answersStored = true
        /// Sent instead of the backlog at the next login (once), for a server that sends out of order.
        var nextLoginReply: [String]?
        /// Ids answered `busy ID 2` (not stored), once each, as a rate-limited server would.
        var busyOnce: Set<UInt64> = []
    }

    let server: LongLinkServer<NumberedTextCodec>
    /// Every message the server received, in order (heartbeats excepted).
    let received = EventRecorder<String>()
    private let state = LockedValue(State())

    /// `webSocket`: sessions over WebSocket upgrades too (``LongLinkServer/Configuration/webSocket``).
    init(
        harness: LinkHarness, port: UInt16 = 0, idleTimeout: Duration = .seconds(360),
        webSocket: LongLinkServer<NumberedTextCodec>.WebSocketConfiguration? = nil
    ) throws {
        let state = self.state
        let received = self.received
        var configuration = LongLinkServer<NumberedTextCodec>.Configuration(port: port)
        configuration.isReusePortEnabled = true
        configuration.idleTimeout = idleTimeout
        configuration.webSocket = webSocket
        server = LongLinkServer(
            codec: NumberedTextCodec(), configuration: configuration, group: harness.group,
            eventQueue: harness.serverQueue
        ) { event in
            guard case .received(let message, let session) = event else { return }
            // Recorded after the answer is decided and sent: a test that waits for a message and then
            // changes what the server does (answersStored) must not change its answer to that message.
            defer { received.record(message) }
            if message.hasPrefix("#") {
                let words = message.dropFirst().split(separator: " ", maxSplits: 1)
                guard let id = words.first.flatMap({ UInt64($0) }) else { return }
                let answer = state.withLock { state -> String? in
                    if state.busyOnce.remove(id) != nil { return "busy \(id) 2" }
                    if state.storedIDs.insert(id).inserted { state.stored.append(words.count > 1 ? String(words[1]) : "") }
                    return state.answersStored ? "stored \(id)" : nil
                }
                if let answer { session.send(answer) }
            } else if message.hasPrefix("login") {
                let replies = state.withLock { state -> [String] in
                    if let reply = state.nextLoginReply {
                        state.nextLoginReply = nil
                        return reply
                    }
                    let positions = DeliveryTestServer.positions(in: message)
                    return state.logs.keys.sorted().flatMap { conversation in
                        let log = state.logs[conversation] ?? []
                        let from = Int(positions[conversation] ?? 0)
                        return log.indices.dropFirst(from).map { "deliver \(conversation) \($0 + 1) \(log[$0])" }
                    }
                }
                if !replies.isEmpty { session.send("batch\n" + replies.joined(separator: "\n")) }
            }
        }
        try server.start()
    }

    var port: UInt16 { server.port }

    /// The texts stored, in order, each once.
    var stored: [String] { state.withLock { $0.stored } }

    /// Whether numbered messages are answered `stored` (default true; false: the answers are lost).
    var answersStored: Bool {
        get { state.withLock { $0.answersStored } }
        set { state.withLock { $0.answersStored = newValue } }
    }

    /// Ids to answer `busy ID 2` once (not stored) instead of `stored ID`.
    var busyOnce: Set<UInt64> {
        get { state.withLock { $0.busyOnce } }
        set { state.withLock { $0.busyOnce = newValue } }
    }

    /// Appends `text` to `conversation`'s log; sends it to every session unless `lost`.
    func append(_ text: String, to conversation: String, lost: Bool = false) {
        let sequence = state.withLock { state -> Int in
            state.logs[conversation, default: []].append(text)
            return state.logs[conversation, default: []].count
        }
        if !lost { server.broadcast("deliver \(conversation) \(sequence) \(text)") }
    }

    /// Sends `message` as it is to every session.
    func sendRaw(_ message: String) { server.broadcast(message) }

    /// At the next login, sends `messages` (in one write) instead of the backlog.
    func replyToNextLogin(with messages: [String]) { state.withLock { $0.nextLoginReply = messages } }

    /// Closes every session (the clients see "disconnected (by server)").
    func closeSessions() { server.sessions.forEach { $0.close() } }

    func stop() { server.stop() }

    /// The positions of a `login a=1,b=2` greeting.
    static func positions(in login: String) -> DeliveryPositions {
        var positions: DeliveryPositions = [:]
        for pair in login.dropFirst("login".count).split(whereSeparator: { $0 == " " || $0 == "," }) {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = UInt64(parts[1]) { positions[String(parts[0])] = value }
        }
        return positions
    }
}

extension LinkHarness {
    /// A reliable client of `port` on ``NumberedTextCodec`` keeping its state in `store`, greeting
    /// with ``NumberedTextCodec/login(_:)``. Reconnect jitter draws 0, and the schedule starts over at
    /// every connect (so each drop is followed by "reconnect attempt 1 in 0 s") unless `configure`
    /// says otherwise.
    func makeReliableClient(
        port: UInt16, store: any DeliveryStateStore,
        configure: (inout LongLinkClient<NumberedTextCodec>.Configuration) -> Void = { _ in }
    ) throws -> LongLinkClient<NumberedTextCodec> {
        var configuration = LongLinkClient<NumberedTextCodec>.Configuration(host: "127.0.0.1", port: port)
        configuration.reconnectSchedule.random = { 0 }
        configuration.linkHealthyAfter = .zero
        configure(&configuration)
        let events = clientEvents
        let client = try LongLinkClient(
            codec: NumberedTextCodec(), configuration: configuration, store: store,
            group: group, eventQueue: clientQueue
        ) { event in
            events.record("\(event)")
        }
        client.greetingBuilder = { NumberedTextCodec.login($0) }
        return client
    }
}
