import AsyncSocket
@testable import ChatProtocol
@testable import ChatServer
import Foundation
import LongLink
import NATSClient
import Testing
import TestSupport

/// A property test of the cluster's fan-out (issue 31 §3): two nodes on one NATS JetStream (the real
/// ``JetStreamMessageStore`` and ``DeliveryWindow``), driven by a seeded random schedule of sends,
/// crashes (a node stops right after storing a message: its sessions drop and its consumer starts
/// over from new messages only), consumer deliveries, logins and drops; the readers follow the
/// server's rules (``Router``'s fan-out, login windows and pump) and the clients' (an outbox resent
/// in id order after each login, deliveries at or below the position ignored). At the end, after every
/// client logged in again and every outbox is stored: every reader has every message of each of its
/// conversations exactly once, in order, and never saw a gap.
@Suite struct FanOutPropertyTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func everyStoredMessageReachesEveryReaderOnceWhateverTheInterleaving(seed: UInt64) async throws {
        let nats = try await NATSTestServer.start()
        defer { nats.stop() }
        let problems = try await runOnAThread { () throws -> [String] in
            let model = try FanOutModel(url: nats.natsURL, seed: seed)
            defer { model.close() }
            try model.run(steps: 250)
            try model.drain()
            return try model.check()
        }
        #expect(problems == [], "seed \(seed)")
    }
}

/// The cluster of the test above, blocking, on one thread (see the suite's documentation).
final class FanOutModel {
    struct Stopped: Error {}
    struct Reader {
        var node: Int
        var window: DeliveryWindow
    }

    let connections: [NATSConnection]
    let stores: [JetStreamMessageStore]
    let users = ["u0", "u1", "u2", "u3"]
    var rng: SplitMix64
    var online: [String: Reader] = [:]
    /// Per user, per conversation: the client's position (the last sequence it showed).
    var shown: [String: [String: UInt64]] = [:]
    /// Per sender, messages sent and not yet answered `stored`, in id order.
    var outbox: [String: [NewMessage]] = [:]
    var nextID: [String: UInt64] = [:]
    /// Per node, messages the other node stored that its consumer has not handed over yet.
    var consumer: [[StoredMessage]] = [[], []]
    /// Per conversation, the highest sequence answered `stored`.
    var acknowledged: [String: UInt64] = [:]
    var problems: [String] = []

    init(url: String, seed: UInt64) throws {
        rng = SplitMix64(seed: seed)
        connections = try (0..<2).map { _ in try NATSConnection.connect(.init(servers: [url], timeout: .seconds(10))) }
        let prefix = "fan" + String(seed)
        stores = try connections.map { try JetStreamMessageStore(connection: $0, prefix: prefix) }
        for user in users { _ = try stores[0].createUser(named: user, passwordHash: "h", at: storeEpoch) }
    }

    func close() { for connection in connections { connection.close() } }

    func instance(of user: String) -> String { String(repeating: user.last.map(String.init) ?? "0", count: 32) }

    // MARK: The schedule

    func run(steps: Int) throws {
        for _ in 0..<steps {
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<40: try send()
            case 40..<65: try deliver(on: Int.random(in: 0..<2, using: &rng))
            case 65..<85: try logInSomeone()
            default:
                if let user = online.keys.sorted().randomElement(using: &rng) { online[user] = nil }
            }
        }
    }

    /// Every consumer hands over what it has, then every client logs in again (in random order, on a
    /// random node) and resends its outbox, without crashes, until every outbox is empty.
    func drain() throws {
        for _ in 0..<20 {
            for node in 0..<2 { while !consumer[node].isEmpty { try deliver(on: node) } }
            online = [:]
            for user in users.shuffled(using: &rng) { try logIn(user, on: Int.random(in: 0..<2, using: &rng), crashes: false) }
            for node in 0..<2 { while !consumer[node].isEmpty { try deliver(on: node) } }
            if outbox.values.allSatisfy(\.isEmpty) { return }
        }
        problems.append("outboxes not empty after 20 rounds: \(outbox.mapValues(\.count))")
    }

    func check() throws -> [String] {
        for (conversation, head) in acknowledged.sorted(by: { $0.key < $1.key }) {
            guard let id = ConversationID(conversation) else { continue }
            let readers = id == .room ? users : users.filter { id.hasMember($0) }
            for reader in readers {
                let position: UInt64 = shown[reader]?[conversation] ?? 0
                if position != head { problems.append("\(reader) is at \(position) of \(conversation), stored up to \(head)") }
            }
            let stored: [UInt64] = try stores[1].messages(in: id, after: 0, limit: 10_000).map(\.sequence)
            let expected: [UInt64] = head == 0 ? [] : Array(1...head)
            if stored != expected { problems.append("\(conversation) holds \(stored)") }
        }
        return problems
    }

    // MARK: Steps

    func send() throws {
        guard let sender = online.keys.sorted().randomElement(using: &rng) else { return try logInSomeone() }
        let recipient = (users + ["room"]).randomElement(using: &rng) ?? "room"
        let conversation: ConversationID = recipient == "room" ? .room : ConversationID(between: sender, and: recipient)
        let id = (nextID[sender] ?? 0) + 1
        nextID[sender] = id
        let message = NewMessage(
            conversation: conversation, sender: sender, text: "\(sender) #\(id)", time: storeEpoch,
            clientInstance: instance(of: sender), clientID: id)
        outbox[sender, default: []].append(message)
        try submit(message, crashes: true)
    }

    /// Appends `message` on its sender's node (crashing it right after the publish, sometimes), then
    /// answers and fans out as ``Router/flush()`` does.
    func submit(_ message: NewMessage, crashes: Bool) throws {
        guard let node = online[message.sender]?.node else { return }
        let crash = crashes && Int.random(in: 0..<100, using: &rng) < 15
        let published = LockedValue<UInt64?>(nil)
        stores[node].afterPublish.withLock {
            $0 = { sequence in
                published.withLock { $0 = sequence }
                if crash { throw Stopped() }
            }
        }
        defer { stores[node].afterPublish.withLock { $0 = nil } }
        let outcome: AppendOutcome
        do {
            outcome = try stores[node].append([message])[0]
        } catch is Stopped {
            // The node died: its sessions drop, its consumer starts over; the other node reads the
            // message from the stream.
            if let sequence = published.withLock({ $0 }) { consumer[1 - node].append(stored(message, sequence)) }
            online = online.filter { $0.value.node != node }
            consumer[node] = []
            return
        }
        outbox[message.sender]?.removeAll { $0.clientID == message.clientID }
        let key = message.conversation.description
        acknowledged[key] = max(acknowledged[key] ?? 0, outcome.sequence)
        if case .stored = outcome { consumer[1 - node].append(stored(message, outcome.sequence)) }
        try fanOut(stored(message, outcome.sequence), on: node)
    }

    func stored(_ message: NewMessage, _ sequence: UInt64) -> StoredMessage {
        StoredMessage(
            conversation: message.conversation, sequence: sequence, sender: message.sender, text: message.text,
            time: message.time, clientInstance: message.clientInstance, clientID: message.clientID)
    }

    /// The next message of `node`'s consumer, to that node's readers.
    func deliver(on node: Int) throws {
        guard !consumer[node].isEmpty else { return }
        try fanOut(consumer[node].removeFirst(), on: node)
    }

    func fanOut(_ message: StoredMessage, on node: Int) throws {
        let readers = message.conversation == .room ? users : users.filter { message.conversation.hasMember($0) }
        for reader in readers where online[reader]?.node == node {
            online[reader]?.window.available(conversation: message.conversation.description, upTo: message.sequence)
            try pump(reader)
        }
    }

    func logInSomeone() throws {
        guard let user = users.filter({ online[$0] == nil }).randomElement(using: &rng) else { return }
        try logIn(user, on: Int.random(in: 0..<2, using: &rng), crashes: true)
    }

    /// A login as ``Router``'s `deliveryWindow(for:positions:)` makes it, with the client's positions,
    /// then the outbox resent in id order.
    func logIn(_ user: String, on node: Int, crashes: Bool) throws {
        let store = stores[node]
        let positions = shown[user] ?? [:]
        var starts: [String: UInt64] = [:]
        var heads: [String: UInt64] = [:]
        for conversation in try store.directConversations(of: user) + [.room] {
            let key = conversation.description
            let head = try store.head(of: conversation)
            starts[key] = min(positions[key] ?? 0, head)  // the server saves no positions here: 0
            heads[key] = head
        }
        var window = DeliveryWindow(positions: starts, limit: 256)
        for (conversation, head) in heads { window.available(conversation: conversation, upTo: head) }
        online[user] = Reader(node: node, window: window)
        try pump(user)
        for message in outbox[user] ?? [] where online[user]?.node == node { try submit(message, crashes: crashes) }
    }

    /// ``Router/pump(_:fresh:)``: what the window has room for, read from the store; the client shows
    /// each delivery above its position and acknowledges at once.
    func pump(_ user: String) throws {
        guard var reader = online[user] else { return }
        while let fetch = reader.window.nextFetch() {
            guard let conversation = ConversationID(fetch.conversation) else { break }
            for message in try stores[reader.node].messages(in: conversation, after: fetch.after, limit: fetch.limit) {
                let position = shown[user]?[fetch.conversation] ?? 0
                if message.sequence > position + 1 {
                    problems.append("\(user) got \(fetch.conversation) #\(message.sequence) after #\(position)")
                }
                if message.sequence > position { shown[user, default: [:]][fetch.conversation] = message.sequence }
            }
            reader.window.sent(fetch)
            reader.window.acknowledge(conversation: fetch.conversation, upTo: fetch.through)
        }
        online[user] = reader
    }
}
