import AsyncSocket
import ChatClient
import ChatServer
import ChatTestSupport
import Foundation
import LongLink
import Testing
import TestSupport

/// A chat client given several servers (``ChatClient/Configuration/endpoints``) moves to the next one
/// when its connection drops. Two in-process servers on loopback, sharing nothing; real time.
@Suite(.offThePool) struct ChatClientFailoverTests {
    @Test func whenTheFirstServerStopsTheClientLogsInOnTheSecondAndItsMessageIsStoredThere() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "chat-failover")
        defer { group.shutdown() }
        let firstStore = InMemoryMessageStore()
        let secondStore = InMemoryMessageStore()
        let first = try ChatFixture(group: group, store: firstStore)
        let second = try ChatFixture(group: group, store: secondStore)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("im-failover-\(UUID().uuidString.prefix(8))").path
        var configuration = ChatClient.Configuration(
            name: "ann",
            endpoints: [
                Endpoint(host: "127.0.0.1", port: first.server.port), Endpoint(host: "127.0.0.1", port: second.server.port)
            ])
        configuration.password = "ann's password"
        configuration.dataDirectory = directory
        configuration.reconnectSchedule = ReconnectSchedule(jitter: .zero)
        let output = EventRecorder<String>()
        let ann = try ChatClient(
            configuration: configuration, group: group, output: { output.record($0) },
            onFinish: { output.record("finished \($0)") })
        defer {
            ann.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        ann.start()
        #expect(try await output.next(2) == ["* connected to 127.0.0.1:\(first.server.port)", "* logged in as ann; online: nobody else"])
        first.server.stop()
        // Taken first, so a failure shows what arrived (an awaited expression's value is not printed).
        let failover = try await output.next(4)
        #expect(
            failover == [
                "* disconnected (by server)",
                "* reconnect attempt 1 to 127.0.0.1:\(second.server.port) in 0 s",
                "* reconnect attempt 1: connected to 127.0.0.1:\(second.server.port)",
                "* logged in as ann; online: nobody else"
            ])
        ann.handle(line: "hello from the second server")
        #expect(try await output.next(2) == ["accepted #1 broadcast: hello from the second server", "stored #1"])
        #expect(secondStore.messages(in: .room, after: 0, limit: 10).map(\.text) == ["hello from the second server"])
        #expect(secondStore.user(named: "ann") != nil)
        #expect(firstStore.messages(in: .room, after: 0, limit: 10).isEmpty)
    }
}
