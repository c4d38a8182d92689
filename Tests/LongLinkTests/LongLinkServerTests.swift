import AsyncSocket
import Dispatch
import Foundation
import Glibc
import LongLink
import Testing
import TestSupport

@Suite struct LongLinkServerTests {
    @Test func clientThatStopsHeartbeatingIsDroppedWithIdleTimeout() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(idleTimeout: .seconds(360))
        defer { server.stop() }
        // A raw socket that connects, says one thing, and then falls silent.
        let silent = RecordingDelegate()
        let socket = TCPSocket(delegate: silent, delegateQueue: DispatchQueue(label: "silent"))
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        socket.write(TextCodec.frame("hi"), withTimeout: -1, tag: 0)
        socket.readData(withTimeout: -1, tag: 0)
        #expect(try await harness.serverEvents.next(2) == ["opened", "received hi"])
        _ = try await silent.events.next(3)  // connected, wrote, read "echo: hi"
        await harness.advance(by: .seconds(359))
        await harness.drainEventQueues()
        #expect(harness.serverEvents.pending == [])
        await harness.advance(by: .seconds(1))
        #expect(try await harness.serverEvents.next() == "closed (idle timeout)")
        #expect(try await silent.events.next().description == "disconnected(socket closed by remote peer)")
        #expect(server.sessions.isEmpty)
    }

    @Test func heartbeatsAreAnsweredAndKeepTheSessionAlive() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(idleTimeout: .seconds(10))
        defer { server.stop() }
        let peer = RecordingDelegate()
        let socket = TCPSocket(delegate: peer, delegateQueue: DispatchQueue(label: "peer"))
        defer { socket.disconnect() }
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        _ = try await peer.events.next()
        for _ in 0..<5 {
            await harness.advance(by: .seconds(9))
            socket.write(TextCodec.frame("PING"), withTimeout: -1, tag: 0)
            socket.readData(toLength: 8, withTimeout: -1, tag: 1)
            let reply = try await peer.events.first { if case .read = $0 { true } else { false } }
            #expect(reply.readData == TextCodec.frame("PONG"))
        }
        await harness.drainEventQueues()
        // The heartbeats never reached the app; the session is still open after 45 s.
        #expect(harness.serverEvents.all == ["opened"])
        #expect(server.sessions.count == 1)
        // Counted for the operator's metrics (each is counted before its answer is sent).
        #expect(server.heartbeatsAnswered == 5)
    }

    @Test func broadcastReachesEverySessionAndSendReachesOne() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        defer { server.stop() }
        let clients = (0..<3).map { _ in harness.makeClient(port: server.port) }
        defer { clients.forEach { $0.disconnect() } }
        for client in clients {
            client.connect()
            _ = try await harness.clientEvents.next()
        }
        _ = try await harness.serverEvents.next(3)
        server.broadcast("to everyone")
        #expect(try await harness.clientEvents.next(3) == Array(repeating: "received to everyone", count: 3))
        #expect(server.sessions.map(\.id) == [1, 2, 3])
        server.sessions[1].send("to the second")
        #expect(try await harness.clientEvents.next() == "received to the second")
    }

    @Test func undecodableFrameClosesOnlyThatSessionAsAProtocolError() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer()
        defer { server.stop() }
        let good = harness.makeClient(port: server.port)
        defer { good.disconnect() }
        good.connect()
        _ = try await harness.clientEvents.next()
        let bad = RecordingDelegate()
        let socket = TCPSocket(delegate: bad, delegateQueue: DispatchQueue(label: "bad"))
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        // A whole frame, then a length of 2^31: the first is delivered, then the session closes.
        var bytes = TextCodec.frame("fine")
        bytes.append(contentsOf: [0x80, 0, 0, 0])
        socket.write(bytes, withTimeout: -1, tag: 0)
        #expect(
            try await harness.serverEvents.next(4) == [
                "opened", "opened", "received fine",
                "closed (protocol error: frame of 2147483652 bytes exceeds the maximum frame length of 65536 bytes)"
            ])
        good.send("still here")
        #expect(try await harness.clientEvents.next() == "received echo: still here")
    }

    /// Regression: bytes of an unfinished frame kept a connection alive past the idle timeout.
    @Test func partialFrameBytesDoNotCountAsActivity() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(idleTimeout: .seconds(360))
        defer { server.stop() }
        let dripper = RecordingDelegate()
        let socket = TCPSocket(delegate: dripper, delegateQueue: DispatchQueue(label: "dripper"))
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        socket.write(TextCodec.frame("hi"), withTimeout: -1, tag: 1)
        #expect(try await harness.serverEvents.next(2) == ["opened", "received hi"])
        await harness.advance(by: .seconds(200))
        // The first byte of a header that claims 64 KiB; loopback hands it to the server's socket
        // before the write completes, and one loop iteration reads it.
        socket.write(Data([0x00]), withTimeout: -1, tag: 2)
        _ = try await dripper.events.first { $0.description == "wrote(tag: 2)" }
        await harness.advance(by: .zero)
        await harness.advance(by: .seconds(159))
        await harness.drainEventQueues()
        #expect(harness.serverEvents.pending == [])
        await harness.advance(by: .seconds(1))
        #expect(try await harness.serverEvents.next() == "closed (idle timeout)")
    }

    @Test func clientThatDoesNotReadIsDroppedAsASlowConsumer() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(maxQueuedBytes: 256 * 1024)
        defer { server.stop() }
        let sloth = RecordingDelegate()
        let socket = TCPSocket(delegate: sloth, delegateQueue: DispatchQueue(label: "sloth"))
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        socket.perform { fd in
            var size: Int32 = 4096
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        #expect(try await harness.serverEvents.next() == "opened")
        let chunk = String(repeating: "x", count: 60_000)
        // Far more than the kernel buffers hold; the client never reads any of it.
        for _ in 0..<200 { server.broadcast(chunk) }
        let closed = try await harness.serverEvents.next()
        #expect(closed.hasPrefix("closed (slow consumer: "))
        let unsent = Int(closed.dropFirst("closed (slow consumer: ".count).prefix { $0.isNumber }) ?? 0
        #expect(unsent > 256 * 1024)
        #expect(server.sessions.isEmpty)
    }
}
