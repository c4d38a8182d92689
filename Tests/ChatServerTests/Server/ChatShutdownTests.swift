import AsyncSocket
import ChatClient
@testable import ChatProtocol
@testable import ChatServer
import Foundation
import LongLink
import Testing
import TestSupport

/// Graceful shutdown (issue 12 §1): the clients are told, reconnect at once to a restarted server, and
/// nothing is lost or stored twice.
@Suite(.offThePool) struct ChatShutdownTests {
    @Test func theClientsAreToldReconnectToARestartedServerAndEveryMessageIsStoredOnce() async throws {
        let store = InMemoryMessageStore()
        let group = EventLoopGroup(numberOfThreads: 1, name: "shutdown")
        defer { group.shutdown() }
        let log = EventRecorder<String>()
        func makeServer(port: UInt16) throws -> ChatServer {
            let server = ChatServer(
                host: "127.0.0.1", port: port, store: store, passwordHasher: PasswordHasher(limits: .minimum),
                group: group, logger: .recording(into: log))
            try server.start()
            return server
        }
        let first = try makeServer(port: 0)
        let port = first.port
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("im-shutdown-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        func client(_ name: String) throws -> (ChatClient, EventRecorder<String>) {
            var configuration = ChatClient.Configuration(name: name, host: "127.0.0.1", port: port)
            configuration.password = "\(name)'s password"
            configuration.dataDirectory = directory.appendingPathComponent(name).path
            configuration.reconnectSchedule = ReconnectSchedule(jitter: .zero)
            let output = EventRecorder<String>()
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
        _ = try await annOut.first { $0.hasPrefix("* logged in as ann") }

        // The shutdown starts while ann's messages are on their way (the first one stored).
        for index in 1...20 { ann.handle(line: "/to bob m\(index)") }
        _ = try await annOut.first { $0 == "stored #1" }
        let summaries = EventRecorder<ChatServer.ShutdownSummary>()
        first.shutDown { summaries.record($0) }
        let summary = try await summaries.next()
        #expect(summary.sessionsTold == 2)
        #expect(try await log.first { $0.hasPrefix("shutting down: ") } == "\(summary)")
        #expect(try await annOut.first { $0.hasPrefix("* server going away") } == "* server going away; reconnecting")
        #expect(try await bobOut.first { $0.hasPrefix("* server going away") } == "* server going away; reconnecting")
        // Told it is going away, each client retries at once (attempt 1, no delay).
        #expect(try await annOut.first { $0.hasPrefix("* reconnect attempt") } == "* reconnect attempt 1 in 0 s")
        // Every message answered `stored` before the restart is in the store.
        let acknowledged = annOut.all.compactMap { line in line.hasPrefix("stored #") ? "m" + line.dropFirst("stored #".count) : nil }
        let conversation = ConversationID(between: "ann", and: "bob")
        let kept = Set(store.messages(in: conversation, after: 0, limit: 100).map(\.text))
        #expect(acknowledged.contains("m1"))
        #expect(Set(acknowledged).isSubset(of: kept))

        // More while the server is down; then it comes back on the same port, with the same store.
        for index in 21...25 { ann.handle(line: "/to bob m\(index)") }
        let second = try makeServer(port: port)
        defer { second.stop() }
        func received() -> [String] {
            bobOut.all.compactMap { $0.hasPrefix("ann (direct): ") ? String($0.dropFirst("ann (direct): ".count)) : nil }
        }
        try await waitUntil(within: .seconds(30), "bob has 25 messages") { received().count >= 25 }
        #expect(received() == (1...25).map { "m\($0)" })
        try await waitUntil(within: .seconds(30), "ann's outbox empty") { ann.deliveryStatus?.outboxCount == 0 }
        #expect(store.messages(in: conversation, after: 0, limit: 100).map(\.text) == (1...25).map { "m\($0)" })
    }

    /// Repeats counted for a summary a minute later are summed up at the shutdown instead of being lost.
    @Test func theShutdownSumsUpTheRepeatsCountedSoFar() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "shutdown-repeats")
        defer { group.shutdown() }
        let log = EventRecorder<String>()
        // The login deadline is not what this tests: under ThreadSanitizer the default 10 s passed before
        // the request was read (a run with a second test process beside it).
        var limits = ChatServer.Limits()
        limits.loginTimeout = TestTiming.hangLimit(limits.loginTimeout)
        let server = ChatServer(host: "127.0.0.1", port: 0, limits: limits, group: group, logger: .recording(into: log))
        try server.start()
        var addresses: [String] = []
        for _ in 1...3 {
            let browser = try await RawChatConnection(port: server.port)
            addresses.append(browser.localAddress)
            try await browser.send(Data("GET / HTTP/1.1\r\n\r\n".utf8))
            let answer = try await browser.next()
            #expect(
                answer == .error(code: .protocolError, detail: #"not a chat frame: version 0x4745 ("GE") is not 1 or 2"#),
                "\(String(describing: answer)); log: \(log.all)")
            let end = try await browser.next()
            #expect(end == nil, "\(String(describing: end))")
        }
        let drop = #"drop \#(addresses[0]) (protocol error: not a chat frame: version 0x4745 ("GE") is not 1 or 2)"#
        let first = try await log.next()
        #expect(first == drop, "\(log.all)")
        // A client sees its end before the router hears of it: shut down only once LongLink has removed
        // the three sessions, so that their closes are queued before the shutdown (the last close was
        // logged after the summary once, a run beside three builds).
        try await waitUntil(within: TestTiming.hangLimit(.seconds(10)), "the three sessions are closed") { server.link.sessions.isEmpty }
        // The group's one loop removes a session and queues its close in one task: a task after it
        // runs once the last close is queued.
        let loop = group.next()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in loop.execute { done.resume() } }
        server.shutDown { _ in }
        let lines = try await log.next(2)
        // "in N s": the whole seconds since the first (real time: 0 unless the machine is slow).
        #expect(lines.count == 2 && lines[0].hasPrefix(drop + " (and 2 more like it in ") && lines[0].hasSuffix(" s)"), "\(lines)")
        #expect(lines.last == "shutting down: 0 sessions told, 0 messages flushed")
    }
}
