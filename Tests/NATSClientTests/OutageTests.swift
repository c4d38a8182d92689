import Foundation
import NATSClient
import Testing
import TestSupport

@Suite struct OutageTests {
    @Test func aRestartedServerIsReconnectedAndJetStreamWorksAgain() async throws {
        let events = EventRecorder<NATSConnection.Event>()
        try await withNATS(events: { events.record($0) }) { server, connection in
            let jetStream = try connection.jetStream()
            try jetStream.addOrUpdateStream(.init(name: "DURABLE", subjects: ["durable.>"]))
            #expect(try jetStream.publish("durable.1", Data(text: "before")).sequence == 1)

            server.kill()
            #expect(try await events.next(within: waitLimit) == .disconnected)
            #expect(!connection.isConnected)

            try await server.restart()
            #expect(try await events.next(within: waitLimit) == .reconnected)
            #expect(connection.isConnected)
            // The stream's file storage survived in the server's directory.
            #expect(try jetStream.publish("durable.2", Data(text: "after")) == .init(stream: "DURABLE", sequence: 2, duplicate: false))
            #expect(try jetStream.message(stream: "DURABLE", sequence: 1)?.data == Data(text: "before"))

            connection.close()
            connection.close()
            // libnats reports the closed socket as a disconnect first.
            #expect(try await events.next(2, within: waitLimit) == [.disconnected, .closed])
            #expect(connection.isClosed)
            #expect(throws: NATSError.notConnected) { try connection.publish("durable.3", Data()) }
        }
    }

    @Test func retryOnFailedConnectConnectsWhenTheServerComes() async throws {
        let server = try await NATSTestServer.start()
        defer { server.stop() }
        server.kill()
        let events = EventRecorder<NATSConnection.Event>()
        let connection = try NATSConnection.connect(testOptions(server, retryOnFailedConnect: true)) { events.record($0) }
        defer { connection.close() }
        #expect(!connection.isConnected)
        try await server.restart()
        #expect(
            try await events.next(within: waitLimit) == .connected,
            "events: \(events.all), last error: \(String(describing: connection.lastError))\n\(server.log)")
        let received = EventRecorder<NATSMessage>()
        let subscription = try connection.subscribe("up") { received.record($0) }
        defer { subscription.unsubscribe() }
        try connection.publish("up", Data(text: "yes"))
        #expect(try await received.next(within: waitLimit).data == Data(text: "yes"))
    }
}
