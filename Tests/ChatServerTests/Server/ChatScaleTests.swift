import AsyncSocket
import ChatClient
@testable import ChatProtocol
import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

/// Issue 11 §6: a burst of 10,000 messages across a server restart, and a broadcast to 500 users of
/// whom half are offline. In process, real sockets on loopback.
@Suite struct ChatScaleTests {
    @Test(.cpuBound) func tenThousandMessagesInABurstAcrossAServerRestartArriveOnceInOrder() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("im-burst-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("chat.sqlite").path
        let group = EventLoopGroup(numberOfThreads: 2, name: "burst")
        defer { group.shutdown() }
        // The burst is what is tested here, not the rate limit (ChatLimitsTests): no limit in the way.
        var limits = ChatServer.Limits()
        limits.messageRate = 1_000_000
        limits.messageBurst = 1_000_000
        func makeServer(port: UInt16) throws -> (ChatServer, SQLiteMessageStore) {
            let store = try SQLiteMessageStore(path: path)
            let server = ChatServer(
                host: "127.0.0.1", port: port, store: store, passwordHasher: PasswordHasher(limits: .minimum),
                limits: limits, group: group)
            try server.start()
            return (server, store)
        }
        // Restarted on its port below: one below the ephemeral range, which no other test's bind(0) or
        // connect takes while the server is down (a port 0 gave was taken once: "bind: Address already
        // in use").
        var (server, store) = try makeServer(port: unusedLoopbackPort())
        let port = server.port
        func client(_ name: String) throws -> (ChatClient, EventRecorder<String>) {
            let output = EventRecorder<String>()
            var configuration = ChatClient.Configuration(name: name, host: "127.0.0.1", port: port)
            configuration.password = name + "'s password"
            configuration.dataDirectory = directory.appendingPathComponent(name).path
            configuration.wait = .seconds(60)
            let client = try ChatClient(
                configuration: configuration, group: group, output: { output.record($0) },
                onFinish: { output.record("finished \($0)") })
            client.start()
            return (client, output)
        }
        let (bob, bobOut) = try client("bob")
        defer { bob.stop() }
        _ = try await bobOut.first { $0.hasPrefix("* logged in as bob") }
        let (ann, annOut) = try client("ann")
        defer { ann.stop() }
        let count = 10_000
        for index in 1...count { ann.handle(line: "/to bob m\(index)") }
        ann.finishInput()

        var received: [String] = []
        func receive(upTo total: Int) async throws {
            while received.count < total {
                let line = try await bobOut.next(within: .seconds(30))
                if line.hasPrefix("ann (direct): ") { received.append(String(line.dropFirst("ann (direct): ".count))) }
            }
        }
        try await receive(upTo: count / 2)
        server.stop()
        // The listening socket closes on its loop: wait until both of the group's loops have run what
        // was queued (this test runs on a thread of its own, which may block). Regression: the bind
        // below failed with "Address already in use" in 2 full runs in 4 beside other builds.
        for _ in 0..<2 { group.next().runAndWait {} }
        store.close()
        (server, store) = try makeServer(port: port)
        defer { server.stop() }
        try await receive(upTo: count)
        #expect(received == (1...count).map { "m\($0)" })
        #expect(try await annOut.first(within: .seconds(60)) { $0.hasPrefix("finished") } == "finished quit")
        #expect(try store.head(of: .init(between: "ann", and: "bob")) == UInt64(count))
    }

    /// The 500 users have claimed their names before (made in the store, as their first logins
    /// would), so the test pays for the presence messages of 250 online users, not of 500 logging in
    /// and 250 leaving (those cost seconds of CPU in a debug build and starved the other tests).
    @Test(.cpuBound) func aBroadcastReachesFiveHundredUsersHalfOfThemWhenTheyComeBack() async throws {
        let store = InMemoryMessageStore()
        let hash = try PasswordHasher(limits: .minimum).hash("pw")
        let users = (1...500).map { "u\($0)" }
        for name in users { _ = try store.createUser(named: name, passwordHash: hash, at: Date()) }
        let chat = try V2Fixture(store: store)
        let online = users.filter { Int($0.dropFirst()).map { $0 % 2 == 1 } ?? false }
        var peers: [V2Peer] = []
        for name in online {
            let peer = chat.peer()
            peer.login(name, password: "pw")
            peers.append(peer)
        }
        for peer in peers {
            _ = try await peer.received.first { if case .v2(.loginAccepted) = $0 { true } else { false } }
        }
        let ann = chat.peer()
        _ = try await ann.loggedIn("ann", password: "a")
        ann.send(.broadcast(id: 1, text: "hello all"))
        let hello = ChatMessage.v2(delivery("ann", "hello all", "room", 1))
        for peer in peers {
            #expect(try await peer.received.first { if case .v2(.delivery) = $0 { true } else { false } } == hello)
            peer.link.disconnect()
        }
        // The other 250 were offline all along; one after another they come back.
        for name in users where !online.contains(name) {
            let back = chat.peer()
            back.login(name, password: "pw")
            #expect(try await back.received.first { if case .v2(.delivery) = $0 { true } else { false } } == hello, "\(name)")
            back.link.disconnect()
        }
    }
}
