import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// ``WebSocketBorrowingDelegate``: on the loop (`delegateQueue: nil`) every text and binary message comes
/// borrowed, whole one-frame ones taken in place and fragmented ones assembled, in order with the
/// library's own answers (a Pong); ``WebSocket/send(copying:opcode:withTimeout:tag:)`` sends them back.
/// With a delegate queue the same delegate gets ``WebSocketDelegate/webSocket(_:didReceive:)``.
@Suite(.offThePool) struct WebSocketBorrowingDelegateTests {
    /// Echoes what arrives borrowed with `send(copying:opcode:)`, and records every message as
    /// "borrowed OPCODE HEX" or "message DESCRIPTION", with "off the loop" when not on the loop. A binary
    /// message starting with 0xEE is answered with its other bytes sent as text (invalid UTF-8 repaired).
    final class BorrowingEcho: WebSocketListenerDelegate, WebSocketBorrowingDelegate {
        let events = EventRecorder<String>()
        let connections = LockedValue<[WebSocket]>([])

        func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
            webSocket.delegate = self
            connections.withLock { $0.append(webSocket) }
        }

        func webSocket(_ webSocket: WebSocket, didReceive bytes: UnsafeRawBufferPointer, opcode: WebSocketOpcode) {
            let place = webSocket.socket.eventLoop.inEventLoop ? "" : " off the loop"
            events.record("borrowed \(opcode) \(bytes.map { String(format: "%02x", $0) }.joined())\(place)")
            if opcode == .binary, bytes.first == 0xEE {
                return webSocket.send(copying: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), opcode: .text)
            }
            webSocket.send(copying: bytes, opcode: opcode)
        }

        func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
            events.record("message \(message)")
            switch message {
            case .text(let text): webSocket.send(text: text)
            case .binary(let data): webSocket.send(data: data)
            default: return
            }
        }
    }

    @Test func onTheLoopEveryMessageComesBorrowedInOrderAndIsEchoedByCopying() async throws {
        let server = BorrowingEcho()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: server, delegateQueue: nil)
        try listener.start()
        defer { listener.stop() }
        let peer = try await RawWebSocketPeer(port: listener.port)
        defer { peer.close() }
        let big = [UInt8](repeating: 0x42, count: 200)  // a 16-bit length: not the 7-bit fast path
        // All in one write: a whole binary and text frame, a text message in two fragments with a Ping
        // between them, a 200-byte binary, an empty binary, and text bytes to be repaired on the way back.
        peer.write(
            RawWebSocketPeer.frame(0x82, [1, 2, 3]) + RawWebSocketPeer.frame(0x81, Array("héllo".utf8))
                + RawWebSocketPeer.frame(0x01, Array("Hel".utf8)) + RawWebSocketPeer.frame(0x89, [9])
                + RawWebSocketPeer.frame(0x80, Array("lo".utf8)) + RawWebSocketPeer.frame(0x82, big)
                + RawWebSocketPeer.frame(0x82, []) + RawWebSocketPeer.frame(0x82, [0xEE, 0x61, 0xFF]))
        var answers: [String] = []
        for _ in 0..<7 {
            let frame = try await peer.readFrame()
            answers.append("\(String(frame.first, radix: 16)) \(String(decoding: frame.payload, as: UTF8.self))")
        }
        #expect(
            answers == [
                "82 \u{1}\u{2}\u{3}", "81 héllo", "8a \u{9}", "81 Hello", "82 " + String(repeating: "B", count: 200), "82 ",
                "81 a\u{FFFD}"
            ])
        var recorded: [String] = []
        for _ in 0..<6 { recorded.append(try await server.events.next(within: TestTiming.hangLimit(.seconds(10)))) }
        #expect(
            recorded == [
                "borrowed binary 010203", "borrowed text 68c3a96c6c6f", "borrowed text 48656c6c6f",
                "borrowed binary " + String(repeating: "42", count: 200), "borrowed binary ", "borrowed binary ee61ff"
            ])
    }

    @Test func withADelegateQueueTheMessagesComeAsValuesOnTheQueue() async throws {
        let server = BorrowingEcho()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: server, delegateQueue: DispatchQueue(label: "echo"))
        try listener.start()
        defer { listener.stop() }
        let peer = try await RawWebSocketPeer(port: listener.port)
        defer { peer.close() }
        peer.write(RawWebSocketPeer.frame(0x82, [1, 2, 3]) + RawWebSocketPeer.frame(0x81, Array("hi".utf8)))
        #expect(try await peer.readFrame() == (0x82, [1, 2, 3]))
        #expect(try await peer.readFrame() == (0x81, Array("hi".utf8)))
        #expect(try await server.events.next(within: TestTiming.hangLimit(.seconds(10))) == "message binary(3 bytes)")
        #expect(try await server.events.next(within: TestTiming.hangLimit(.seconds(10))) == "message text(\"hi\")")
    }
}
