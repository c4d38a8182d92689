import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Peers that stop: one that stops reading while we send (the async `send` must wait, memory must stay
/// bounded), and one that goes silent during the closing handshake (the close timeout must end it
/// with 1006, RFC 6455 §7.1.1, §7.1.5), each over loopback.
@Suite(.cpuBound(minutes: 2)) struct WebSocketStalledPeerTests {
    /// A plain TCP server that answers one client's upgrade with 101 and then does only what the test
    /// asks: the accepted socket and its recorder.
    static func acceptUpgrade(_ pair: LoopbackListener) async throws -> (TCPSocket, RecordingDelegate) {
        guard case .accepted(let server) = try await pair.serverDelegate.events.next(within: TestTiming.hangLimit(.seconds(10)))
        else { throw RawPeerError("no accept") }
        let recorder = pair.serverDelegate
        server.readData(to: Data("\r\n\r\n".utf8), withTimeout: TestTiming.hangTimeout(10), tag: 1)
        guard case .read(let request, tag: 1) = try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) else {
            throw RawPeerError("no request")
        }
        let key = try #require(RawHandshake.header("Sec-WebSocket-Key", in: String(decoding: request, as: UTF8.self)).first)
        server.write(Data(RawHandshake.answer(key: String(key)).utf8), withTimeout: -1, tag: 2)
        return (server, recorder)
    }

    /// An async client (keep-alive off) on `group`, connected to the plain TCP server of `pair` through
    /// ``acceptUpgrade(_:)``: the connection, the server's accepted socket and its recorder.
    static func connect(
        through pair: LoopbackListener, group: EventLoopGroup
    ) async throws -> (WebSocketConnection, TCPSocket, RecordingDelegate) {
        var configuration = WebSocket.ClientConfiguration()
        configuration.connection = WebSocketProtocolHandler(role: .client, keepAlive: nil)
        async let connecting = WebSocketConnection.connect(to: "ws://127.0.0.1:\(pair.port)/", configuration: configuration, group: group)
        let (server, recorder) = try await acceptUpgrade(pair)
        return (try await connecting, server, recorder)
    }

    /// The async client sends 16 MiB (256 messages of 64 KiB) to a server that reads 64 KiB at a time,
    /// slowly: `send` waits while the write queue is over its high watermark, so the bytes queued stay
    /// within the watermark and a few messages, never the 16 MiB the app tried to send.
    @Test func sendWaitsWhileAPeerThatStoppedReadingKeepsTheQueueFull() async throws {
        // Loops of its own: 16 MiB through the shared ones would hold up other tests' events.
        let group = EventLoopGroup(numberOfThreads: 1, name: "stalled-reader")
        defer { group.shutdown() }
        let pair = try LoopbackListener(group: group)
        defer { pair.close() }
        let (connection, server, recorder) = try await Self.connect(through: pair, group: group)
        let socket = connection.webSocket.socket
        #expect(socket.writeHighWatermark == WebSocketConnection.defaultWriteHighWatermark)
        // Small kernel buffers both ways, so the 16 MiB cannot all wait in the kernel: with Linux's
        // autotuning (tcp_rmem up to 32 MiB here) it could, and in one full run the client's own queue
        // was empty at every look ("mostQueued → 0"): the server's reads kept up with the sender.
        server.receiveBufferSize = 64 << 10
        socket.sendBufferSize = 64 << 10
        let chunk = Data(repeating: 0x61, count: 64 << 10)
        let sender = Task {
            for _ in 0..<256 { try await connection.send(.binary(chunk)) }
        }
        // The server reads nothing until the client's queue is over its high watermark (the sender then
        // waits), so the test does not depend on which of the two loops runs faster.
        try await waitUntil(within: TestTiming.hangLimit(.seconds(20)), "the queue over its high watermark") {
            socket.queuedWriteBytes > WebSocketConnection.defaultWriteHighWatermark
        }
        var mostQueued = socket.queuedWriteBytes
        // Then it reads the 16 MiB (each frame 64 KiB + 14 bytes of header and mask), 64 KiB a read, and
        // looks at the client's queue after each read.
        var remaining = 256 * (chunk.count + 14)
        var tag = 10
        while remaining > 0 {
            tag += 1
            let count = min(remaining, 64 << 10)
            server.readData(toLength: UInt(count), withTimeout: TestTiming.hangTimeout(20), tag: tag)
            let event = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(20))) {
                if case .read(_, tag: tag) = $0 { return true }
                if case .disconnected = $0 { return true }
                return false
            }
            guard case .read = event else {
                Issue.record("the server's read ended: \(event)")
                break
            }
            remaining -= count
            mostQueued = max(mostQueued, socket.queuedWriteBytes)
        }
        try await sender.value
        // At most the watermark and the messages handed over while the news that it was crossed
        // travelled from the loop to the bridge: 16 messages is far more than that takes.
        #expect(mostQueued <= WebSocketConnection.defaultWriteHighWatermark + 16 * (chunk.count + 14), "queued \(mostQueued)")
        #expect(mostQueued > WebSocketConnection.defaultWriteHighWatermark)
        socket.disconnect()
        _ = server
    }

    /// The echo server closes (1001) and its peer goes silent, as behind a proxy that stopped
    /// forwarding: no Close comes back and TCP stays up. At the close timeout (10 s, in virtual time)
    /// the server closes TCP and reports 1006, not before.
    @Test func aServerWhosePeerGoesSilentDuringTheCloseHandshakeEndsItAtTheCloseTimeoutWith1006() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "silent-peer")
        defer { group.shutdown() }
        let server = EchoListenerDelegate()
        let listener = try server.start(group: group) { $0.connection = WebSocketProtocolHandler(role: .server, keepAlive: nil) }
        defer { listener.stop() }
        let peer = try await RawWebSocketPeer(port: listener.port)
        defer { peer.close() }
        peer.write(RawWebSocketPeer.frame(0x81, Array("close me".utf8)))
        #expect(try await peer.readClose() == "1001 asked")
        await clock.advance(by: .milliseconds(9_999))
        #expect(server.closes.all == [])
        await clock.advance(by: .milliseconds(1))
        #expect(try await server.closes.next(within: TestTiming.hangLimit(.seconds(10))) == "1006 (not clean)")
        try await peer.disconnected()
    }

    /// The echo server closes while its peer reads nothing and 16 MiB of echoes fill the kernel's buffers
    /// and the write queue: its Close cannot even be written. The close timeout still ends it with 1006
    /// (TCP closed without waiting for the queue), not before 10 s (virtual time).
    @Test func aCloseStuckBehindAFullWriteQueueEndsAtTheCloseTimeoutWith1006() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "full-queue")
        defer { group.shutdown() }
        let peerGroup = EventLoopGroup(numberOfThreads: 1, name: "full-queue-peer")  // not the shared loops
        defer { peerGroup.shutdown() }
        let server = EchoListenerDelegate()
        let listener = try server.start(group: group) { $0.connection = WebSocketProtocolHandler(role: .server, keepAlive: nil) }
        defer { listener.stop() }
        let peer = try await RawWebSocketPeer(port: listener.port, group: peerGroup)
        defer { peer.close() }
        let message = RawWebSocketPeer.frame(0x82, [UInt8](repeating: 0x62, count: 256 << 10))
        for _ in 0..<64 { peer.write(message) }
        peer.write(RawWebSocketPeer.frame(0x81, Array("close me".utf8)))
        #expect(try await server.events.first(within: TestTiming.hangLimit(.seconds(20))) { $0 == "closing" } == "closing")
        await clock.advance(by: .milliseconds(9_999))
        #expect(server.closes.all == [])
        await clock.advance(by: .milliseconds(1))
        #expect(try await server.closes.next(within: TestTiming.hangLimit(.seconds(10))) == "1006 (not clean)")
        #expect(server.openCount == 0)
    }

    /// The same for an async client whose server goes silent once it has the client's Close: `close()`
    /// returns 1006 at the close timeout, and the client's TCP is closed.
    @Test func aClientWhosePeerGoesSilentDuringTheCloseHandshakeEndsItAtTheCloseTimeoutWith1006() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "silent-server")
        defer { group.shutdown() }
        let pair = try LoopbackListener()
        defer { pair.close() }
        let (connection, server, recorder) = try await Self.connect(through: pair, group: group)
        let closing = Task { await connection.close(code: .normalClosure, reason: "done") }
        // The client's Close arrives (masked: 6 bytes of header and key, then 1000 and "done").
        server.readData(toLength: 12, withTimeout: TestTiming.hangTimeout(10), tag: 3)
        let event = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .read(_, tag: 3) = $0 { return true }
            return false
        }
        guard case .read(let close, _) = event else { return }
        #expect(Array(close.prefix(2)) == [0x88, 0x86])
        await clock.advance(by: .milliseconds(9_999))
        #expect(connection.webSocket.socket.isConnected)
        await clock.advance(by: .milliseconds(1))
        #expect(await closing.value.description == "1006 (not clean)")
        server.readData(withTimeout: TestTiming.hangTimeout(10), tag: 4)
        _ = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .disconnected = $0 { return true }
            return false
        }
    }

    /// Our async client and our server through a proxy whose path dies once the connection is up (it
    /// forwards nothing more, and neither side's TCP ends). The client's Close is lost; at the close
    /// timeout (10 s, virtual time) `close()` returns 1006.
    @Test func aPathThatTurnsIntoABlackHoleDuringTheCloseHandshakeEndsItAtTheCloseTimeoutWith1006() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "black-hole-client")
        defer { group.shutdown() }
        let server = EchoListenerDelegate()
        let listener = try server.start { $0.connection = WebSocketProtocolHandler(role: .server, keepAlive: nil) }
        defer { listener.stop() }
        let proxy = try BlackHoleProxy(to: listener.port)
        defer { proxy.close() }
        var configuration = WebSocket.ClientConfiguration()
        configuration.connection = WebSocketProtocolHandler(role: .client, keepAlive: nil)
        let connection = try await WebSocketConnection.connect(
            to: "ws://127.0.0.1:\(proxy.port)/", configuration: configuration, group: group)
        try await connection.send(.text("through"))
        var messages = connection.messages.makeAsyncIterator()
        #expect(await messages.next() == .text("through"))
        proxy.blackHole()
        let closing = Task { await connection.close(code: .normalClosure, reason: "done") }
        // The Close (6 bytes of header and key, the code, "done") is dropped on the way.
        #expect(try await proxy.dropped.next(within: TestTiming.hangLimit(.seconds(10))) == "dropped 12")
        await clock.advance(by: .milliseconds(9_999))
        #expect(connection.webSocket.socket.isConnected)
        await clock.advance(by: .milliseconds(1))
        #expect(await closing.value.description == "1006 (not clean)")
        #expect(server.closes.all == [])  // the server heard nothing
    }
}
