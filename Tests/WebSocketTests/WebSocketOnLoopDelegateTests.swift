import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// `delegateQueue: nil`: the delegates of a listener, its accepted sockets and a client are called on
/// the socket's event loop thread, and what they send from there goes out (issue 33's echo path).
@Suite(.offThePool) struct WebSocketOnLoopDelegateTests {
    static let messageCount = 10_000

    /// Message `index`: 64 bytes, the index big-endian in the first 4.
    static func message(_ index: Int) -> Data {
        var bytes = [UInt8](repeating: 0x5A, count: 64)
        for shift in 0..<4 { bytes[shift] = UInt8(truncatingIfNeeded: index >> (24 - 8 * shift)) }
        return Data(bytes)
    }

    /// The index `message(_:)` put in `data`, or nil when it is not such a message.
    static func index(of data: Data) -> Int? {
        guard data.count == 64 else { return nil }
        return data.prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }

    /// Echoes every message from its delegate calls, checking each arrives on the loop and in order.
    final class OnLoopEchoServer: WebSocketListenerDelegate, WebSocketDelegate {
        let events = EventRecorder<String>()
        let received = LockedValue(0)
        let connections = LockedValue<[WebSocket]>([])

        func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
            if !webSocket.socket.eventLoop.inEventLoop { events.record("didAccept off the loop") }
            webSocket.delegate = self
            connections.withLock { $0.append(webSocket) }
        }

        func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
            if !webSocket.socket.eventLoop.inEventLoop { events.record("didReceive off the loop") }
            guard case .binary(let data) = message else { return events.record("not binary: \(message)") }
            let expected = received.withLock { count in
                defer { count += 1 }
                return count
            }
            if WebSocketOnLoopDelegateTests.index(of: data) != expected {
                events.record("server got \(data.count) bytes out of order at \(expected)")
            }
            webSocket.send(data: data)
        }

        func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
            if !webSocket.socket.eventLoop.inEventLoop { events.record("didClose off the loop") }
            events.record("server closed \(result)")
        }
    }

    /// Sends every message once open (on the loop), and counts the echoes.
    final class OnLoopClient: WebSocketDelegate {
        let events = EventRecorder<String>()
        let received = LockedValue(0)

        func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {
            if !webSocket.socket.eventLoop.inEventLoop { events.record("didOpen off the loop") }
            for index in 0..<WebSocketOnLoopDelegateTests.messageCount { webSocket.send(data: WebSocketOnLoopDelegateTests.message(index)) }
        }

        func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
            events.record("failed \(error)")
        }

        func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
            if !webSocket.socket.eventLoop.inEventLoop { events.record("client didReceive off the loop") }
            guard case .binary(let data) = message else { return events.record("not binary: \(message)") }
            let count = received.withLock { count in
                count += 1
                return count
            }
            if WebSocketOnLoopDelegateTests.index(of: data) != count - 1 {
                events.record("client got an echo out of order at \(count - 1)")
            }
            if count == WebSocketOnLoopDelegateTests.messageCount { events.record("echoed \(count)") }
        }

        func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
            if !webSocket.socket.eventLoop.inEventLoop { events.record("client didClose off the loop") }
            events.record("client closed \(result)")
        }
    }

    @Test func echoesFromWithinTheLoopsDelegateCallsRoundTripTenThousandMessagesInOrder() async throws {
        let server = OnLoopEchoServer()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: server, delegateQueue: nil)
        try listener.start()
        defer { listener.stop() }
        let client = OnLoopClient()
        let webSocket = WebSocket(delegate: client, delegateQueue: nil)
        #expect(webSocket.delegateQueue == nil)
        #expect(listener.delegateQueue == nil)
        try webSocket.connect(to: "ws://127.0.0.1:\(listener.port)/")
        #expect(try await client.events.next(within: TestTiming.hangLimit(.seconds(60))) == "echoed \(Self.messageCount)")
        webSocket.close()
        #expect(try await client.events.next(within: TestTiming.hangLimit(.seconds(10))) == "client closed 1000 (clean)")
        #expect(try await server.events.next(within: TestTiming.hangLimit(.seconds(10))) == "server closed 1000 (clean)")
        #expect(server.received.withLock { $0 } == Self.messageCount)
        #expect(client.received.withLock { $0 } == Self.messageCount)
    }
}
