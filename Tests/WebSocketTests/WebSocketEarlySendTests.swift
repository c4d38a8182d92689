import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Records a client's opening and what became of its sends: `open`, `failed ERROR`, `sent TAG`,
/// `rejected TAG`.
private final class OpeningSendsDelegate: WebSocketDelegate {
    let events = EventRecorder<String>()

    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) { events.record("open") }
    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) { events.record("failed \(error)") }
    func webSocket(_ webSocket: WebSocket, didSendMessageWithTag tag: Int) { events.record("sent \(tag)") }
    func webSocket(_ webSocket: WebSocket, didRejectSendWithTag tag: Int, error: WebSocketProtocolHandler.SendError) {
        events.record("rejected \(tag)")
    }
}

/// A client's sends made before its opening handshake is done wait for the server's 101 (RFC 6455
/// §4.1: no frame before it). Regression: they were written at once, so a send made right after
/// `connect(to:)` reached the server before the upgrade request.
///
/// The clients' timers run on a manual clock: their 10 s deadline for the server's answer is not what
/// these test, and in two full runs it fired while the test's own steps waited for a thread.
@Suite struct WebSocketEarlySendTests {
    private static let limit = TestTiming.hangLimit(.seconds(10))

    /// A listener, and a client connecting to it: its timers on a loop of its own whose clock moves only
    /// when advanced, its delegate `recorder` on a queue.
    private struct Rig {
        let listener: LoopbackListener
        let recorder = OpeningSendsDelegate()
        let group = EventLoopGroup(numberOfThreads: 1, clock: ManualClock(), name: "early-send")
        let client: WebSocket

        init() throws {
            listener = try LoopbackListener()
            client = WebSocket(
                client: WebSocket.ClientConfiguration(), delegate: recorder, delegateQueue: DispatchQueue(label: "early"), group: group)
            try client.connect(to: "ws://127.0.0.1:\(listener.port)/")
        }

        func close() {
            group.shutdown()
            listener.close()
        }
    }

    /// The server's side: accepted, and the upgrade request read up to its blank line.
    private static func acceptAndReadRequest(_ listener: LoopbackListener) async throws -> (TCPSocket, String) {
        let server = try await listener.accepted()
        server.readData(to: Data("\r\n\r\n".utf8), withTimeout: TestTiming.hangTimeout(10), tag: 1)
        return (server, String(decoding: try await listener.read(tag: 1), as: UTF8.self))
    }

    @Test func sendsMadeWhileConnectingGoOutAfterThe101InOrder() async throws {
        let rig = try Rig()
        defer { rig.close() }
        let (listener, recorder, client) = (rig.listener, rig.recorder, rig.client)
        client.send(text: "early", tag: 1)
        client.sendPing(Data("p".utf8))
        client.send(data: Data([1, 2, 3]), tag: 2)
        let (server, request) = try await Self.acceptAndReadRequest(listener)
        #expect(request.hasPrefix("GET / HTTP/1.1\r\n"))
        let key = try #require(RawHandshake.header("Sec-WebSocket-Key", in: request).first)
        server.write(Data(RawHandshake.answer(key: String(key)).utf8), withTimeout: -1, tag: 2)
        #expect(try await recorder.events.next(3, within: Self.limit) == ["open", "sent 1", "sent 2"])
        // Three masked frames: text "early" (2 + 4 + 5 bytes), Ping "p" (2 + 4 + 1), binary 01 02 03 (2 + 4 + 3).
        server.readData(toLength: 27, withTimeout: TestTiming.hangTimeout(10), tag: 3)
        let bytes = Array(try await listener.read(tag: 3))
        var frames: [(UInt8, [UInt8])] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset + 1] & 0x7F)
            let key = bytes[(offset + 2)..<(offset + 6)].map { $0 }
            let payload = bytes[(offset + 6)..<(offset + 6 + length)].enumerated().map { $0.element ^ key[$0.offset % 4] }
            frames.append((bytes[offset], payload))
            offset += 6 + length
        }
        #expect(frames.map(\.0) == [0x81, 0x89, 0x82])
        #expect(frames.map(\.1) == [Array("early".utf8), Array("p".utf8), [1, 2, 3]])
    }

    @Test func sendsWaitingForAnOpeningThatFailsAreRejectedAndSoAreLaterOnes() async throws {
        let rig = try Rig()
        defer { rig.close() }
        let (listener, recorder, client) = (rig.listener, rig.recorder, rig.client)
        client.send(text: "early", tag: 1)
        client.send(text: "early too", tag: 2)
        let (server, request) = try await Self.acceptAndReadRequest(listener)
        #expect(request.hasPrefix("GET / HTTP/1.1\r\n"))
        server.write(Data("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".utf8), withTimeout: -1, tag: 2)
        let events = try await recorder.events.next(3, within: Self.limit)
        #expect(events.first?.hasPrefix("failed ") == true, "\(events)")
        #expect(Array(events.dropFirst()) == ["rejected 1", "rejected 2"])
        client.send(text: "late", tag: 3)
        #expect(try await recorder.events.next(within: Self.limit) == "rejected 3")
    }

    @Test func closingAClientThatIsStillConnectingStopsItAndRejectsItsSends() async throws {
        let rig = try Rig()
        defer { rig.close() }
        let (listener, recorder, client) = (rig.listener, rig.recorder, rig.client)
        client.send(text: "early", tag: 1)
        let (_, request) = try await Self.acceptAndReadRequest(listener)
        #expect(request.hasPrefix("GET / HTTP/1.1\r\n"))
        client.close()
        let events = try await recorder.events.next(2, within: Self.limit)
        #expect(events == ["failed \(WebSocketConnectError.socket(.connectionClosed))", "rejected 1"], "\(events)")
        // The server saw the request and then the end: no frame (bytes left unread would come first, in
        // a willDisconnect event).
        let end = try await listener.serverDelegate.events.next(1, within: Self.limit) { !$0.isProgress }
        #expect(end.map(\.description) == ["disconnected(socket closed by remote peer)"])
    }
}
