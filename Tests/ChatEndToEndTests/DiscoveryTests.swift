import AsyncSocket
import ChatClient
@testable import ChatProtocol
import ChatServer
import Foundation
import Testing
import TestSupport

/// Discovery on this machine only: servers join a group of their own in 239.255.0.0/16 on 127.0.0.1
/// and bind a UDP port picked by the kernel, clients send from 127.0.0.1 with TTL 0, so parallel tests
/// never hear each other (and a stray answer would fail the nonce check anyway).
@Suite struct DiscoveryTests {
    /// A group in the IPv4 Local Scope (RFC 2365), different for every call and never the default one.
    static func uniqueGroup() -> String {
        var generator = SystemRandomNumberGenerator()
        return "239.255.\(Int.random(in: 1...254, using: &generator)).\(Int.random(in: 100...254, using: &generator))"
    }

    /// A chat server on a free loopback port answering discovery on `group` (port 0: a free one).
    final class Server: Sendable {
        let log = EventRecorder<String>()
        let chat: ChatServer
        let loops: EventLoopGroup

        init(name: String, group: String, port: UInt16 = 0, loops: EventLoopGroup) throws {
            let log = self.log
            self.loops = loops
            chat = ChatServer(
                host: "127.0.0.1", port: 0, discovery: .init(group: group, port: port, serverName: name),
                group: loops, logger: .recording(into: log))
            try chat.start()
        }

        /// A client logged in as `name`, connected directly.
        func loggedIn(_ name: String) async throws -> ChatClient {
            let output = EventRecorder<String>()
            let client = ChatClient(
                name: name, host: "127.0.0.1", port: chat.port, group: loops,
                output: { output.record($0) }, onFinish: { _ in })
            client.start()
            _ = try await output.first { $0.hasPrefix("* logged in as") }
            return client
        }

        deinit { chat.stop() }
    }

    /// A search of `group`:`port` from 127.0.0.1 with TTL 0.
    static func search(
        _ group: String, _ port: UInt16, timeout: Duration = .milliseconds(500), name: String = ""
    ) -> DiscoveryClient.Configuration {
        var configuration = DiscoveryClient.Configuration()
        configuration.group = group
        configuration.port = port
        configuration.ttl = 0
        configuration.interfaces = ["127.0.0.1"]
        configuration.timeout = timeout
        configuration.serverName = name
        return configuration
    }

    @Test func aServerIsFoundOverLoopbackMulticastAndCanBeChattedWith() async throws {
        let loops = EventLoopGroup(numberOfThreads: 1, name: "discovery")
        defer { loops.shutdown() }
        let group = Self.uniqueGroup()
        let server = try Server(name: "lobby", group: group, loops: loops)
        let port = try #require(server.chat.discoveryPort)
        #expect(port != 0)

        let found = try await DiscoveryClient.discover(Self.search(group, port), group: loops)
        #expect(found.chosen.name == "lobby")
        #expect(found.chosen.host == "127.0.0.1")
        #expect(found.chosen.port == server.chat.port)
        #expect(found.chosen.onlineUsers == 0)
        #expect(found.chosen.answeredFrom.port == port)
        // Both queries were answered; the second answer is the same server, listed once.
        #expect(found.servers == [found.chosen])
        #expect(found.ignoredDatagrams == 0)
        #expect(found.report == "* found lobby at 127.0.0.1:\(server.chat.port) (0 online)")
        let statistics = try #require(server.chat.discoveryStatistics)
        #expect(statistics.malformed == 0 && statistics.otherName == 0 && (1...2).contains(statistics.answered))

        // What was found is a chat server.
        let output = EventRecorder<String>()
        let ann = ChatClient(
            name: "ann", host: found.chosen.host, port: found.chosen.port, group: loops,
            output: { output.record($0) }, onFinish: { _ in })
        ann.start()
        defer { ann.finishInput() }
        #expect(try await output.next(2) == ["* connected to 127.0.0.1:\(server.chat.port)", "* logged in as ann; online: nobody else"])
    }

    /// Two servers on one group and port: the client takes the one with fewer users online, whichever
    /// answered first; a wanted name overrides the load.
    @Test func twoServersTheLeastBusyIsChosen() async throws {
        let loops = EventLoopGroup(numberOfThreads: 1, name: "discovery")
        defer { loops.shutdown() }
        let group = Self.uniqueGroup()
        let busy = try Server(name: "busy", group: group, loops: loops)
        let port = try #require(busy.chat.discoveryPort)
        let quiet = try Server(name: "quiet", group: group, port: port, loops: loops)
        #expect(quiet.chat.discoveryPort == port)
        let ann = try await busy.loggedIn("ann")
        defer { ann.finishInput() }

        let found = try await DiscoveryClient.discover(Self.search(group, port), group: loops)
        #expect(Set(found.servers.map(\.name)) == ["busy", "quiet"])
        #expect(found.servers.first { $0.name == "busy" }?.onlineUsers == 1)
        #expect(found.chosen.name == "quiet")
        #expect(found.chosen.port == quiet.chat.port)
        #expect(found.report == "* found quiet at 127.0.0.1:\(quiet.chat.port) (0 online), the least busy of 2 servers")

        // Equal load: the earliest answer wins.
        let bob = try await quiet.loggedIn("bob")
        defer { bob.finishInput() }
        let tie = try await DiscoveryClient.discover(Self.search(group, port), group: loops)
        #expect(tie.servers.count == 2 && tie.servers.allSatisfy { $0.onlineUsers == 1 })
        #expect(tie.chosen == tie.servers[0])

        // Asking by name: only that server answers; the other counts a query for another name.
        let named = try await DiscoveryClient.discover(Self.search(group, port, name: "busy"), group: loops)
        #expect(named.servers.map(\.name) == ["busy"])
        #expect((quiet.chat.discoveryStatistics?.otherName ?? 0) >= 1)
    }

    /// In virtual time: the second query goes out half-way, and with no answer the search fails exactly
    /// when its window ends (it measured wall time before, and a 3 s bound failed under ThreadSanitizer).
    @Test func noServerIsAnErrorWhenTheWindowEnds() async throws {
        let clock = ManualClock()
        let loops = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "discovery")
        defer { loops.shutdown() }
        let group = Self.uniqueGroup()
        // A member of the group that never answers: it sees the queries.
        let member = RecordedUDPSocket("member", group: loops)
        member.socket.isIPv6Enabled = false
        try member.socket.bind(toPort: 0)
        try member.socket.joinMulticastGroup(group, onInterface: "127.0.0.1")
        try member.socket.beginReceiving()
        defer { member.socket.close() }
        let port = member.socket.localPort

        let outcome = EventRecorder<Result<DiscoveryResult, DiscoveryError>>()
        DiscoveryClient.discover(Self.search(group, port, timeout: .milliseconds(300)), group: loops) { outcome.record($0) }
        guard case .received(let first, _, _) = try await member.next() else { throw DiscoveryTestFailure.noQuery }
        let nonce = try DiscoveryQuery(decoding: first).nonce
        await clock.advance(by: .milliseconds(149))
        #expect(outcome.pending.isEmpty)
        await clock.advance(by: .milliseconds(1))
        guard case .received(let second, _, _) = try await member.next() else { throw DiscoveryTestFailure.noQuery }
        #expect(try DiscoveryQuery(decoding: second).nonce == nonce)
        await clock.advance(by: .milliseconds(149))
        #expect(outcome.pending.isEmpty)
        await clock.advance(by: .milliseconds(1))
        let result = try await outcome.next()
        #expect(
            result.map(\.servers)
                == .failure(DiscoveryError.noAnswer(group: group, port: port, timeout: .milliseconds(300), ignoredDatagrams: 0)))
    }

    enum DiscoveryTestFailure: Error { case noQuery }

    /// The responder ignores and counts what is not a query for it, and keeps answering.
    @Test func theServerIgnoresBadDatagramsAndKeepsAnswering() async throws {
        let loops = EventLoopGroup(numberOfThreads: 1, name: "discovery")
        defer { loops.shutdown() }
        let group = Self.uniqueGroup()
        let server = try Server(name: "lobby", group: group, loops: loops)
        let port = try #require(server.chat.discoveryPort)
        let sender = try Self.multicastSender(loops)
        let garbage: [Data] = [
            Data(),
            Data("hello".utf8),
            Data(DiscoveryProtocol.magic + [2, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0]),  // version 2
            DiscoveryAnswer(nonce: 1, port: 1, onlineUsers: 0, host: "", serverName: "x").encoded,  // not a query
            DiscoveryQuery(nonce: 1).encoded + [0],  // trailing byte
            Data(repeating: 0x49, count: DiscoveryProtocol.maxDatagramBytes + 1)  // too long
        ]
        for (tag, datagram) in garbage.enumerated() {
            sender.socket.send(datagram, toHost: group, port: port, withTimeout: TestTiming.hangTimeout(5), tag: tag)
        }
        sender.socket.send(
            DiscoveryQuery(nonce: 2, serverName: "elsewhere").encoded, toHost: group, port: port, withTimeout: TestTiming.hangTimeout(5),
            tag: 99)
        try await waitUntil("the responder counted every datagram") {
            server.chat.discoveryStatistics == .init(answered: 0, malformed: garbage.count, otherName: 1)
        }
        #expect(try await sender.delegate.events.next(garbage.count + 1).allSatisfy { if case .sent = $0 { true } else { false } })
        #expect(sender.pending.isEmpty)  // nothing was answered

        let found = try await DiscoveryClient.discover(Self.search(group, port), group: loops)
        #expect(found.chosen.name == "lobby")
    }

    /// The client ignores and counts answers that are malformed or echo another nonce.
    @Test func theClientIgnoresBadAndForeignAnswers() async throws {
        let loops = EventLoopGroup(numberOfThreads: 1, name: "discovery")
        defer { loops.shutdown() }
        let group = Self.uniqueGroup()
        // A fake server: a plain member of the group that answers the first query three times, at once
        // on its loop thread (answered from the test's task, the answers once came after the client's
        // one-second window, when the suite kept the task waiting for a thread).
        let fake = FakeResponder()
        let socket = UDPSocket(delegate: fake, delegateQueue: nil, group: loops)
        socket.isIPv6Enabled = false
        try socket.bind(toPort: 0)
        try socket.joinMulticastGroup(group, onInterface: "127.0.0.1")
        try socket.beginReceiving()
        defer { socket.close() }
        let port = socket.localPort

        let found = try await DiscoveryClient.discover(Self.search(group, port, timeout: .seconds(1)), group: loops)
        let queries = try await fake.queries.next(1)
        #expect(queries.map(\.serverName) == [""])
        // An empty host means the answer's source address.
        #expect(
            found.servers == [
                DiscoveredServer(
                    name: "fake", host: "127.0.0.1", port: 4001, onlineUsers: 7,
                    answeredFrom: try #require(SocketAddress(ipAddress: "127.0.0.1", port: port)))
            ])
        #expect(found.ignoredDatagrams == 2)
    }

    /// Answers the first discovery query it receives with a datagram that is no answer, an answer with
    /// the wrong nonce and a good one (`fake`, port 4001, 7 online), from the socket's loop thread.
    final class FakeResponder: UDPSocketDelegate, Sendable {
        let queries = EventRecorder<DiscoveryQuery>()
        private let answered = LockedValue(false)

        func udpSocket(
            _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress,
            withFilterContext filterContext: (any Sendable)?
        ) {
            guard let query = try? DiscoveryQuery(decoding: data) else { return }
            let first = answered.withLock { answered in
                defer { answered = true }
                return !answered
            }
            guard first else { return }
            queries.record(query)
            sock.send(Data("nonsense".utf8), to: address, withTimeout: TestTiming.hangTimeout(5), tag: 1)
            sock.send(
                DiscoveryAnswer(nonce: query.nonce &+ 1, port: 4000, onlineUsers: 0, host: "", serverName: "stale").encoded,
                to: address, withTimeout: TestTiming.hangTimeout(5), tag: 2)
            sock.send(
                DiscoveryAnswer(nonce: query.nonce, port: 4001, onlineUsers: 7, host: "", serverName: "fake").encoded,
                to: address, withTimeout: TestTiming.hangTimeout(5), tag: 3)
        }
    }

    /// A socket that sends IPv4 multicast from 127.0.0.1 with TTL 0.
    static func multicastSender(_ loops: EventLoopGroup) throws -> RecordedUDPSocket {
        let sender = RecordedUDPSocket("sender", group: loops)
        sender.socket.isIPv6Enabled = false
        try sender.socket.sendIPv4Multicast(onInterface: "127.0.0.1")
        try sender.socket.setMulticastTTL(0)
        try sender.socket.enableMulticastLoop(true)
        return sender
    }

    /// The responder is bound to its group's address: a datagram to its port by unicast, or to another
    /// group on the same port, never reaches it (a loopback server cannot be asked from the LAN).
    @Test func theServerHearsOnlyItsGroup() async throws {
        let loops = EventLoopGroup(numberOfThreads: 1, name: "discovery")
        defer { loops.shutdown() }
        let group = Self.uniqueGroup()
        let server = try Server(name: "lobby", group: group, loops: loops)
        let port = try #require(server.chat.discoveryPort)
        // Another member, of another group, on the same port: it hears what is sent to its group.
        var otherGroup = Self.uniqueGroup()
        while otherGroup == group { otherGroup = Self.uniqueGroup() }
        let other = RecordedUDPSocket("other", group: loops)
        other.socket.isIPv6Enabled = false
        try other.socket.enableReuseAddress(true)
        try other.socket.enableReusePort(true)
        try other.socket.bind(to: try #require(SocketAddress(ipAddress: otherGroup, port: port)))
        try other.socket.joinMulticastGroup(otherGroup, onInterface: "127.0.0.1")
        try other.socket.beginReceiving()

        let sender = try Self.multicastSender(loops)
        let query = DiscoveryQuery(nonce: 3).encoded
        sender.socket.send(query, toHost: "127.0.0.1", port: port, withTimeout: TestTiming.hangTimeout(5), tag: 1)
        sender.socket.send(query, toHost: otherGroup, port: port, withTimeout: TestTiming.hangTimeout(5), tag: 2)
        #expect(try await other.next().receivedData == query)
        #expect(try await sender.delegate.events.next(2) == [.sent(tag: 1), .sent(tag: 2)])
        // The search's queries reach the server after those datagrams: had it heard them, it would have
        // counted them by the time it answered.
        let found = try await DiscoveryClient.discover(Self.search(group, port), group: loops)
        #expect(found.chosen.name == "lobby")
        let statistics = try #require(server.chat.discoveryStatistics)
        #expect(statistics.malformed == 0 && statistics.otherName == 0 && (1...2).contains(statistics.answered))
    }

    /// `im-server` answers discovery; `im-client --discover` finds it and chats; with nobody answering
    /// it says so and exits with status 1.
    @Test func theExecutablesFindEachOther() async throws {
        let group = Self.uniqueGroup()
        let server = try ChildProcess.startProduct(
            "im-server", ["--port", "0", "--store", ":memory:", "--name", "lobby", "--discovery-group", group, "--discovery-port", "0"])
        defer { server.stop() }
        let lines = try await server.lines.next(2).map(logText)
        let tcpPort = try #require(lines[0].split(separator: ":").last?.split(separator: " ").first.map(String.init))
        #expect(lines[1].hasPrefix("im-server answering discovery on \(group):") && lines[1].hasSuffix(" as lobby"))
        let udpPort = try #require(lines[1].split(separator: ":").last?.split(separator: " ").first.map(String.init))
        let flags = [
            "--discover-group", group, "--discover-port", udpPort, "--discover-ttl", "0",
            "--discover-interface", "127.0.0.1", "--discover-timeout", "0.5"
        ]

        let ann = try ChildProcess.startProduct("im-client", ["ann", "--discover", "--protocol", "1"] + flags)
        defer { ann.stop() }
        #expect(
            try await ann.lines.next(3) == [
                "* found lobby at 127.0.0.1:\(tcpPort) (0 online)",
                "* connected to 127.0.0.1:\(tcpPort)",
                "* logged in as ann; online: nobody else"
            ])
        ann.type("/quit")
        #expect(try await ann.exitStatus() == 0)

        let lost = try ChildProcess.startProduct(
            "im-client",
            [
                "bob", "--discover", "--discover-group", Self.uniqueGroup(), "--discover-port", udpPort,
                "--discover-ttl", "0", "--discover-interface", "127.0.0.1", "--discover-timeout", "0.3"
            ])
        defer { lost.stop() }
        let message = try await lost.lines.next()
        #expect(
            message.hasPrefix("im-client: no chat server answered discovery on 239.255.") && message.hasSuffix(":\(udpPort) within 0.3 s"))
        #expect(try await lost.exitStatus() == 1)
    }
}
