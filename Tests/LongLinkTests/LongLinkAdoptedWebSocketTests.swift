import AsyncSocket
import Dispatch
import Foundation
import Glibc
import LongLink
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// A `WebSocketListener` delegate that hands every upgrade to a LongLink server
/// (``LongLinkServer/adoptWebSocket(_:request:)``), as the chat's web port (ChatWeb) does.
private final class Adopter: WebSocketListenerDelegate, Sendable {
    let server: LongLinkServer<TextCodec>

    init(server: LongLinkServer<TextCodec>) { self.server = server }

    func listener(_ listener: WebSocketListener, shouldTakeOver request: WebSocketUpgradeRequest) -> Bool { true }

    func listener(_ listener: WebSocketListener, didTakeOver socket: TCPSocket, request: WebSocketUpgradeRequest) {
        server.adoptWebSocket(socket, request: request)
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        webSocket.close()  // never: every upgrade is taken over
    }
}

/// Sessions over a WebSocket another server's listener accepted (``LongLinkServer/adoptWebSocket(_:request:)``):
/// "the same limits" as the server's own sessions, the slow-consumer bound included. Regression: the
/// adopted socket kept its listener's write watermark (none), so a client of the chat's web port that
/// stopped reading was never dropped, and the server's memory grew with everything sent to it (or, with
/// no login at all, with the Pongs of the Pings it sent: 118 MB of RSS for 60 MB of Pings in 6 s).
@Suite struct LongLinkAdoptedWebSocketTests {
    @Test func anAdoptedClientThatDoesNotReadIsDroppedAsASlowConsumer() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer(maxQueuedBytes: 256 * 1024)
        defer { server.stop() }
        let adopter = Adopter(server: server)
        let web = WebSocketListener(configuration: .init(port: 0), delegate: adopter, delegateQueue: nil)
        try web.start()
        defer { web.stop() }
        let sloth = RecordingDelegate()
        let socket = TCPSocket(delegate: sloth, delegateQueue: DispatchQueue(label: "sloth"))
        defer { socket.disconnect() }
        try socket.connect(toHost: "127.0.0.1", onPort: web.port, withTimeout: TestTiming.hangTimeout(10))
        socket.perform { fd in
            var size: Int32 = 4096
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let request =
            "GET /link HTTP/1.1\r\nHost: 127.0.0.1:\(web.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        socket.write(Data(request.utf8), withTimeout: -1, tag: 1)
        #expect(try await harness.serverEvents.next() == "opened")
        let chunk = String(repeating: "x", count: 60_000)
        // Far more than the kernel buffers hold; the client never reads any of it.
        for _ in 0..<200 { server.broadcast(chunk) }
        let closed = try await harness.serverEvents.next()
        #expect(closed.hasPrefix("closed (slow consumer: "), "\(closed)")
        let unsent = Int(closed.dropFirst("closed (slow consumer: ".count).prefix { $0.isNumber }) ?? 0
        #expect(unsent > 256 * 1024)
        #expect(server.sessions.isEmpty)
    }
}
