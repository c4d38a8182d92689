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
/// queues at most ``WebSocket/maxUnsentPongs`` of them (§5.5.3 lets it skip answers while earlier
/// Pongs are unsent). Regression: every Ping's Pong was queued, without bound; against socket-bench's
/// echo server 80 MB of Pings grew its RSS by about 100 MB in 20 s.
@Suite(.cpuBound) struct WebSocketPingFloodTests {
    @Test func aPeerThatSendsPingsAndReadsNothingGetsAtMost64PongsQueued() async throws {
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
        #expect(seen.hasPrefix("end: \(WebSocket.maxUnsentPongs) pongs, "), "\(seen)")
        let queued = Int(seen.split(separator: " ")[3]) ?? -1
        #expect(queued > 0 && queued <= Int(WebSocket.maxUnsentPongs) * 127, "\(seen)")
    }
}
