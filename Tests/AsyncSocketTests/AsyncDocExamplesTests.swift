@testable import AsyncSocket
import Foundation
import Testing
import TestSupport

/// The examples of docs/ASYNC.md, run on loopback, so the documentation cannot drift from the code.
///
/// Off the pool, servers included (`Task(executorPreference:)` where the documentation writes
/// `Task {}`, which does not inherit the test's executor): their ends are chains of resumptions, and on
/// a busy machine at the start of a run Swift's cooperative pool held them behind the run's queued
/// tests past the 10 s bound (2 busy runs in 12).
@Suite(.offThePool) struct AsyncDocExamplesTests {
    @Test func acceptLoopEchoServer() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let server = Task(executorPreference: ThreadExecutor.offThePool) {
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in listener {
                    group.addTask {
                        do {
                            while true {
                                let line = try await connection.read(upTo: TCPSocket.lfData, maxLength: 4096)
                                try await connection.write(line)
                            }
                        } catch {}
                        await connection.close()
                    }
                }
            }
        }
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        try await client.write(bytes("one\ntwo\n"))
        #expect(text(try await within { try await client.read(exactly: 8) }) == "one\ntwo\n")
        await client.close()
        await listener.close()
        // The loop ends with the listener, the group with the last connection.
        try await within { try await server.value }
    }

    @Test func halfCloseClientReadsTheWholeResponse() async throws {
        let listener = try await TCPListener.bind(
            host: "127.0.0.1", port: 0, options: .init(connectionOptions: .init(allowRemoteHalfClosure: true)))
        let server = Task(executorPreference: ThreadExecutor.offThePool) {
            guard let connection = try await nextConnection(listener) else { return "" }
            var request = Data()
            do {
                while true { request += try await connection.read() }
            } catch SocketError.closedByPeer {}
            try await connection.write(bytes("got \(request.count) bytes"))
            await connection.close()
            return text(request)
        }
        let connection = try await TCPConnection.connect(
            toHost: "127.0.0.1", port: listener.port,
            options: .init(allowRemoteHalfClosure: true))
        try await connection.write(bytes("the whole request"))
        await connection.closeWrite()
        var response = Data()
        do {
            while true { response += try await within { try await connection.read() } }
        } catch SocketError.closedByPeer {}
        #expect(text(response) == "got 17 bytes")
        #expect(try await within { try await server.value } == "the whole request")
        await connection.close()
        await listener.close()
    }

    @Test func deadlineByCancellationKeepsTheLateLineForTheNextRead() async throws {
        let pair = try await ConnectedPair.open()
        let connection = pair.server
        let reply = try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask { try await connection.read(upTo: TCPSocket.lfData) }
            group.addTask {
                try await Task.sleep(for: .milliseconds(50))  // the deadline under test
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        #expect(reply == nil)
        try await pair.client.write(bytes("late\n"))
        #expect(text(try await within { try await connection.read(upTo: TCPSocket.lfData) }) == "late\n")
        await pair.close()
    }
}
