import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// What a ``WebSocket``'s delegate saw, as lines (`text Hello`, `binary 3 bytes`, `pong 0001`, `closed 1000 (clean)`).
final class RecordingWebSocketDelegate: WebSocketDelegate {
    let events = EventRecorder<String>()

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): events.record("text \(text)")
        case .binary(let data): events.record("binary \(data.count) bytes")
        default: events.record("other \(message)")
        }
    }

    func webSocket(_ webSocket: WebSocket, didReceivePong payload: Data) {
        events.record("pong \(payload.map { String(format: "%02x", $0) }.joined())")
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        events.record("closed \(result)")
    }

    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {
        events.record("open \(subprotocol ?? "-") \(extensions.map(\.name))")
    }

    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
        events.record("failed \(error)")
    }
}

extension WebSocket {
    /// A server WebSocket on `accepted` (its upgrade taken as done), keep-alive off, its delegate
    /// `delegate` on `queue`.
    static func server(
        upgraded accepted: TCPSocket, delegate: WebSocketDelegate, queue: DispatchQueue = DispatchQueue(label: "ws")
    ) -> WebSocket {
        WebSocket(
            upgraded: accepted, role: .server, handler: WebSocketProtocolHandler(role: .server, keepAlive: nil), delegate: delegate,
            delegateQueue: queue)
    }
}

/// A server ``WebSocket`` over a real loopback connection, its peer a plain TCP socket writing the
/// RFC's bytes.
@Suite(.offThePool) struct WebSocketLoopbackTests {
    /// The client's next `count` bytes.
    static func read(_ count: UInt, from pair: LoopbackPair) async throws -> [UInt8] {
        pair.client.readData(toLength: count, withTimeout: TestTiming.hangTimeout(10), tag: 7)
        while true {
            if case .read(let data, tag: 7) = try await pair.clientDelegate.events.next(within: TestTiming.hangLimit(.seconds(10))) {
                return Array(data)
            }
        }
    }

    @Test func messagesBothWaysAPingAnsweredAndTheCloseHandshake() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        let recorder = RecordingWebSocketDelegate()
        let webSocket = WebSocket.server(upgraded: accepted, delegate: recorder)
        // RFC 6455 §5.7: a masked "Hello", then a masked Ping "Hello" split inside its masking key.
        pair.client.write(
            Data([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58, 0x89, 0x85, 0x37, 0xFA]), withTimeout: -1, tag: 1)
        #expect(try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) == "text Hello")
        pair.client.write(Data([0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]), withTimeout: -1, tag: 2)
        #expect(try await Self.read(7, from: pair) == [0x8A, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        webSocket.send(text: "hi")
        #expect(try await Self.read(4, from: pair) == [0x81, 0x02, 0x68, 0x69])
        // The client closes with 1000 (masked with a zero key): echoed, and the server closes TCP.
        pair.client.write(Data([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8]), withTimeout: -1, tag: 3)
        #expect(try await Self.read(4, from: pair) == [0x88, 0x02, 0x03, 0xE8])
        #expect(try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) == "closed 1000 (clean)")
    }

    @Test func anUnmaskedFrameFromAClientFailsTheConnectionWith1002() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        let recorder = RecordingWebSocketDelegate()
        let webSocket = WebSocket.server(upgraded: accepted, delegate: recorder)
        pair.client.write(Data([0x81, 0x02, 0x68, 0x69]), withTimeout: -1, tag: 1)
        let reason = WebSocketProtocolError.unmaskedFrame.description
        #expect(
            try await Self.read(UInt(4 + reason.utf8.count), from: pair) == [0x88, UInt8(2 + reason.utf8.count), 0x03, 0xEA]
                + Array(reason.utf8))
        #expect(try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) == "closed 1002 \"\(reason)\" (not clean)")
        _ = webSocket
    }
}
