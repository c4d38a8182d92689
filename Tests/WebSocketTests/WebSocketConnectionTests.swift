import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Sends `count` numbered texts to every connection it accepts, then echoes what it receives.
final class BurstListenerDelegate: WebSocketListenerDelegate, WebSocketDelegate {
    let count: Int
    private let sockets = LockedValue<[WebSocket]>([])

    init(count: Int) { self.count = count }

    /// Message `index`: `message INDEX` padded with dots to 1,000 bytes.
    static func text(_ index: Int) -> String {
        let head = "message \(index) "
        return head + String(repeating: ".", count: 1_000 - head.utf8.count)
    }

    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        .accept(subprotocol: request.subprotocols.first)
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        sockets.withLock { $0.append(webSocket) }
        webSocket.delegate = self
        for index in 0..<count { webSocket.send(text: Self.text(index)) }
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        if case .text(let text) = message { webSocket.send(text: "echo \(text)") }
    }
}

/// The async face: connect, messages with backpressure, send, close.
@Suite(.offThePool) struct WebSocketConnectionTests {
    @Test func aSlowReaderGetsEveryMessageInOrderAndItsSendsAreEchoed() async throws {
        let burst = BurstListenerDelegate(count: 2_000)
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: burst, delegateQueue: DispatchQueue(label: "listener"))
        try listener.start()
        defer { listener.stop() }
        var configuration = WebSocket.ClientConfiguration()
        configuration.subprotocols = ["chat.v2", "chat.v1"]
        let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/chat", configuration: configuration)
        #expect(connection.subprotocol == "chat.v2")
        // 2,000 messages (2 MB) arrive while nobody reads: reading pauses once 64 are buffered (the frames
        // of the read under way are still decoded), so far fewer than 2,000 wait; it resumes as they are taken.
        try await waitUntil(within: TestTiming.hangLimit(.seconds(10)), "reading paused") { connection.isReadingPaused }
        let buffered = connection.bufferedMessages
        #expect(buffered >= 64 && buffered < 2_000, "\(buffered) buffered")
        var iterator = connection.messages.makeAsyncIterator()
        var received: [String] = []
        for _ in 0..<2_000 {
            let next = await iterator.next()
            guard case .text(let text)? = next else {
                Issue.record("after \(received.count): \(String(describing: next)), paused \(connection.isReadingPaused)")
                if next == nil { Issue.record("closed: \(await connection.closeResult)") }
                return
            }
            received.append(text)
        }
        #expect(received == (0..<2_000).map(BurstListenerDelegate.text))
        #expect(!connection.isReadingPaused && connection.bufferedMessages == 0)
        try await connection.send(.text("ping me"))
        #expect(await iterator.next() == .text("echo ping me"))
        let result = await connection.close(code: .goingAway, reason: "bye")
        #expect(result == WebSocketCloseResult(code: .goingAway, reason: "", wasClean: true))
        #expect(await iterator.next() == nil)
        await #expect(throws: WebSocketProtocolHandler.SendError.closing) { try await connection.send(.text("late")) }
    }

    @Test func connectingToAPortWithNothingOnItIsATypedError() async throws {
        let reserved = ReservedLoopbackPort()  // bound, never listening: a connect is refused
        defer { withExtendedLifetime(reserved) {} }
        await #expect(throws: WebSocketConnectError.socket(.connectionRefused(operation: "connect", errno: ECONNREFUSED))) {
            _ = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(reserved.port)/")
        }
    }
}
