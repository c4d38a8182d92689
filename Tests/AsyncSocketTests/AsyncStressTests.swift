@testable import AsyncSocket
import Foundation
import Testing
import TestSupport

@Suite struct AsyncStressTests {
    @Test func thousandSequentialRequestResponseRoundTrips() async throws {
        let server = try await AsyncTestServer(AsyncTestServer.lineEcho)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: server.port, timeout: .seconds(5))
        let mismatches = try await within(.seconds(60)) {
            var mismatches: [String] = []
            for index in 0..<1_000 {
                try await client.write(bytes("ping \(index)\n"))
                let reply = text(try await client.read(upTo: TCPSocket.lfData))
                if reply != "echo: ping \(index)\n" { mismatches.append(reply) }
            }
            return mismatches
        }
        #expect(mismatches == [])
        #expect(client.bridge.readsQueued == 1_000)
        await client.close()
        await server.stop()
    }

    @Test func fiftyConcurrentConnectionsEachDoARoundTrip() async throws {
        let server = try await AsyncTestServer(AsyncTestServer.lineEcho)
        let port = server.port
        let replies = try await within(.seconds(60)) {
            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(10))
                        try await client.write(bytes("hello \(index)\n"))
                        let reply = try await client.read(upTo: TCPSocket.lfData)
                        await client.close()
                        return text(reply)
                    }
                }
                var replies: [String] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
        }
        #expect(replies.sorted() == (0..<50).map { "echo: hello \($0)\n" }.sorted())
        await server.stop()
    }
}
