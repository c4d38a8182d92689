import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Takes every upgrade over: the socket becomes the test's, which reads 5 bytes from it and answers.
private final class TakingOverDelegate: WebSocketListenerDelegate, @unchecked Sendable {
    let taken = EventRecorder<String>()
    let server = RecordingDelegate()
    /// The sockets taken (the listener keeps none).
    var sockets: [TCPSocket] = []

    func listener(_ listener: WebSocketListener, shouldTakeOver request: WebSocketUpgradeRequest) -> Bool { true }

    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        taken.record("asked to accept")  // never: taken over first
        return .accept()
    }

    func listener(_ listener: WebSocketListener, didTakeOver socket: TCPSocket, request: WebSocketUpgradeRequest) {
        sockets.append(socket)
        taken.record("took \(request.target) from \(request.origin ?? "no origin")")
        socket.setDelegate(server, delegateQueue: nil)
        socket.readData(toLength: 5, withTimeout: TestTiming.hangTimeout(10), tag: 1)
        socket.write(Data("mine".utf8), withTimeout: -1, tag: 2)
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        taken.record("accepted")
    }
}

/// `listener(_:shouldTakeOver:)`: the app gets the socket with nothing answered and the bytes
/// after the request head still to be read.
@Suite(.offThePool) struct WebSocketListenerTakeOverTests {
    @Test func aTakenOverSocketHasNothingWrittenAndKeepsTheBytesAfterTheHead() async throws {
        let delegate = TakingOverDelegate()
        let listener = WebSocketListener(
            configuration: .init(port: 0), delegate: delegate, delegateQueue: DispatchQueue(label: "take-over"))
        try listener.start()
        defer { listener.stop() }
        let recorder = RecordingDelegate()
        let client = TCPSocket(delegate: recorder, delegateQueue: nil)
        defer { client.disconnect() }
        try client.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: TestTiming.hangTimeout(10))
        let request =
            "GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://a.example\r\n\r\nhello"
        client.write(Data(request.utf8), withTimeout: -1, tag: 0)
        client.readData(toLength: 4, withTimeout: TestTiming.hangTimeout(10), tag: 3)
        #expect(try await delegate.taken.next(within: TestTiming.hangLimit(.seconds(10))) == "took /chat from http://a.example")
        let serverSaw = try await delegate.server.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .read = $0 { true } else { false }
        }
        #expect(serverSaw == .read(Data("hello".utf8), tag: 1))
        let clientSaw = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .read = $0 { true } else { false }
        }
        #expect(clientSaw == .read(Data("mine".utf8), tag: 3))  // no 101 before it
        #expect(delegate.taken.pending == [])
    }
}
