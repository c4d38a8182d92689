import AsyncSocket
import Dispatch
import Foundation
import Glibc
import SocketFraming
import Testing
import TestSupport
@testable import WebSocket

/// A listener's app (delegate calls on the loop) that keeps each accepted connection, gives its socket
/// a small send buffer (so the kernel holds few Pongs and the rest wait in the socket's queue), and at a
/// text message records the Pongs waiting in that queue then: `"TEXT: N pongs, B bytes queued"`.
private final class PongCounter: WebSocketListenerDelegate, WebSocketDelegate, Sendable {
    let events = EventRecorder<String>()
    private let open = LockedValue<[WebSocket]>([])

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        webSocket.socket.sendBufferSize = 4096
        open.withLock { $0.append(webSocket) }
        webSocket.delegate = self
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        guard case .text(let text) = message else { return }
        events.record("\(text): \(webSocket.unsentPongs) pongs, \(webSocket.socket.queuedWriteBytes) bytes queued")
    }
}

/// A peer that sends Pings and reads nothing (RFC 6455 §5.5.2 asks for a Pong to each): the server
/// queues fewer than twice ``WebSocket/maxUnsentPongs`` of them (§5.5.3 lets it skip answers while
/// earlier Pongs are unsent). Regression: every Ping's Pong was queued, without bound; against socket-bench's
/// echo server 80 MB of Pings grew its RSS by about 100 MB in 20 s.
@Suite(.cpuBound) struct WebSocketPingFloodTests {
    @Test func aPeerThatSendsPingsAndReadsNothingGetsFewerThan128PongsQueued() async throws {
        // A loop of its own: 6 MB of Pings through the shared ones would hold up other tests' events.
        let group = EventLoopGroup(numberOfThreads: 1, name: "ping-flood")
        defer { group.shutdown() }
        let app = PongCounter()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: app, delegateQueue: nil, group: group)
        try listener.start()
        defer { listener.stop() }
        let recorder = RecordingDelegate()
        let client = TCPSocket(delegate: recorder, delegateQueue: DispatchQueue(label: "flooder"), group: group)
        defer { client.disconnect() }
        try client.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: TestTiming.hangTimeout(10))
        client.perform { fd in
            var size: Int32 = 4096
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let request =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(listener.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        var bytes = Data(request.utf8)
        let encoder = WebSocketFrameEncoder(role: .client)
        // 50,000 Pings of 125 bytes: 6.35 MB of Pongs. The kernel took about 1 MB of them without the
        // bound (10,000 Pings left 210 KB queued), whatever the 4 KiB buffers asked for; the rest waits.
        let ping = try encoder.encode(WebSocketFrame(opcode: .ping, payload: Data(repeating: 0x70, count: 125)))
        for _ in 0..<50_000 { bytes += ping }
        bytes += try encoder.encode(WebSocketFrame(opcode: .text, payload: Data("end".utf8)))
        client.write(bytes, withTimeout: -1, tag: 1)
        let seen = try await app.events.next()
        let pongs = Int(seen.split(separator: " ")[1]) ?? -1
        let queued = Int(seen.split(separator: " ")[3]) ?? -1
        // 64 of earlier reads at least (the kernel's buffers are full), fewer than 128 (64 more at most).
        let bound = Int(WebSocket.maxUnsentPongs)
        #expect(pongs >= bound && pongs < 2 * bound, "\(seen)")
        #expect(queued > 0 && queued <= pongs * 127, "\(seen)")
    }

    /// A burst of 1,000 Pings in one write from a peer that reads: the Pongs answer the most recent
    /// Pings (§5.5.3), in order, the last one's among them, and at least 64. (The first version of the bound answered the first 64 Pings of a read and dropped the rest, the
    /// last one's too.)
    @Test func aBurstOfPingsGetsThePongsOfTheMostRecentInOrder() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "ping-burst")
        defer { group.shutdown() }
        let app = PongCounter()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: app, delegateQueue: nil, group: group)
        try listener.start()
        defer { listener.stop() }
        let recorder = RecordingDelegate()
        let client = TCPSocket(delegate: recorder, delegateQueue: DispatchQueue(label: "burst"), group: group)
        defer { client.disconnect() }
        try client.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: TestTiming.hangTimeout(10))
        let request =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(listener.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        var bytes = Data(request.utf8)
        let encoder = WebSocketFrameEncoder(role: .client)
        for index in 0..<1_000 {
            bytes += try encoder.encode(WebSocketFrame(opcode: .ping, payload: Data([UInt8(index >> 8), UInt8(index & 0xFF)])))
        }
        client.write(bytes, withTimeout: -1, tag: 1)
        client.readData(to: Data("\r\n\r\n".utf8), withTimeout: TestTiming.hangTimeout(10), tag: 2)
        // Each Pong is 4 bytes (0x8A, length 2, the Ping's index); read them until the last Ping's.
        var answered: [Int] = []
        for tag in 3..<1_003 {
            client.readData(toLength: 4, withTimeout: TestTiming.hangTimeout(10), tag: tag)
            let event = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
                switch $0 {
                case .read(_, tag: tag), .disconnected: return true
                default: return false
                }
            }
            guard case .read(let pong, _) = event, pong.count == 4, pong[pong.startIndex] == 0x8A else {
                throw RawPeerError("not a Pong: \(event)")
            }
            answered.append(Int(pong[pong.startIndex + 2]) << 8 | Int(pong[pong.startIndex + 3]))
            if answered.last == 999 { break }
        }
        #expect(answered.last == 999)
        #expect(answered == answered.sorted() && Set(answered).count == answered.count)
        #expect(answered.count >= Int(WebSocket.maxUnsentPongs), "\(answered.count) Pongs")
    }
}
