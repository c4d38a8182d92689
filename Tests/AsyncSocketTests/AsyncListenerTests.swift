@testable import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

@Suite struct AsyncListenerTests {
    @Test func iterationEndsWhenTheListenerCloses() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let port = listener.port
        let received = LockedValue<[TCPConnection]>([])
        let iterating = Task {
            for try await connection in listener { received.withLock { $0.append(connection) } }
            return received.withLock { $0.count }
        }
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5))
        try await waitUntil { received.withLock { $0.count } == 1 }
        await listener.close()
        #expect(try await within { try await iterating.value } == 1)
        // Connections already handed out live on; the port is closed.
        let server = try #require(received.withLock { $0.first })
        try await client.write(bytes("still"))
        #expect(text(try await within { try await server.read(exactly: 5) }) == "still")
        let refused = try await thrownError { _ = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5)) }
        #expect(refused as? SocketError == .connectionRefused(operation: "connect", errno: ECONNREFUSED))
        // Iterating a closed listener ends at once.
        #expect(try await nextConnection(listener) == nil)
        await client.close()
        await server.close()
    }

    @Test func connectionsNotYetIteratedAreClosedWithTheListener() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        try await waitUntil { listener.bridge.pendingConnections == 1 }
        await listener.close()
        let error = try await thrownError { _ = try await client.read() }
        #expect(error as? SocketError == .closedByPeer)
        await client.close()
    }

    @Test func iterationEndsWhenTheIteratingTaskIsCancelledAndTheListenerStaysOpen() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let iterating = Task {
            var count = 0
            for try await _ in listener { count += 1 }
            return count
        }
        try await waitUntil { listener.bridge.waitingIterations == 1 }
        iterating.cancel()
        #expect(try await within { try await iterating.value } == 0)
        #expect(listener.bridge.waitingIterations == 0)
        // Still listening: a new iteration gets the next connection.
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = try #require(try await nextConnection(listener))
        try await client.write(bytes("hi"))
        #expect(text(try await within { try await server.read(exactly: 2) }) == "hi")
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func connectionsBeyondThePendingBoundAreClosedAtOnce() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, options: .init(maxPendingConnections: 2))
        var connected: [TCPConnection] = []
        for _ in 0..<3 {
            connected.append(try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5)))
        }
        let clients = connected
        // The third is accepted and closed; the first two wait.
        let error = try await thrownError { _ = try await clients[2].read() }
        #expect(error as? SocketError == .closedByPeer)
        #expect(listener.bridge.pendingConnections == 2)
        for client in clients.prefix(2) {
            let server = try #require(try await nextConnection(listener))
            #expect(server.remoteAddress == client.localAddress)
            try await client.write(bytes("ok"))
            #expect(text(try await within { try await server.read(exactly: 2) }) == "ok")
            await server.close()
        }
        for client in clients { await client.close() }
        await listener.close()
    }

    @Test func bindingAPortInUseThrowsAddressInUse() async throws {
        let first = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let error = try await thrownError { _ = try await TCPListener.bind(host: "127.0.0.1", port: first.port) }
        #expect(error as? SocketError == .addressInUse(operation: "bind", errno: EADDRINUSE))
        await first.close()
    }

    @Test func unixDomainRoundTrip() async throws {
        let path = "/tmp/asyncapi-\(getpid())-\(UInt32.random(in: 0 ... .max)).sock"
        let url = URL(fileURLWithPath: path)
        let listener = try await TCPListener.bind(url: url)
        #expect(listener.port == 0)
        #expect(listener.localAddress?.path == path)
        let serving = Task { () -> String in
            var iterator = listener.makeAsyncIterator()
            guard let connection = try await iterator.next() else { return "no connection" }
            let request = try await connection.read(upTo: TCPSocket.lfData)
            try await connection.write(bytes("unix: ") + request)
            await connection.close()
            return text(request)
        }
        let client = try await TCPConnection.connect(to: url, timeout: .seconds(5))
        #expect(client.remoteAddress?.path == path)
        try await client.write(bytes("over a path\n"))
        #expect(text(try await within { try await client.read(upTo: TCPSocket.lfData) }) == "unix: over a path\n")
        #expect(try await within { try await serving.value } == "over a path\n")
        let end = try await thrownError { _ = try await client.read() }
        #expect(end as? SocketError == .closedByPeer)
        await client.close()
        await listener.close()
        // Closing the listener removed its socket file.
        #expect(access(path, F_OK) != 0)
    }
}
