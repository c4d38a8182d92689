import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Records what a server hears besides data: each Pong's payload as text, and its close.
private final class PongRecordingDelegate: WebSocketListenerDelegate, WebSocketDelegate {
    let events = EventRecorder<String>()
    private let sockets = LockedValue<[WebSocket]>([])

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        sockets.withLock { $0.append(webSocket) }
        webSocket.delegate = self
    }

    func webSocket(_ webSocket: WebSocket, didReceivePong payload: Data) {
        events.record("pong \(String(decoding: payload, as: UTF8.self))")
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        events.record("closed \(result.code.rawValue) \(result.reason)")
    }
}

/// The async face's control messages. Regression: `send(.pong)` and `send(.close)` threw `.closing` on
/// an open connection (issue 33's closing note).
@Suite(.offThePool) struct WebSocketControlSendTests {
    @Test func anUnsolicitedPongGoesOutAndACloseMessageStartsTheClosingHandshake() async throws {
        let app = PongRecordingDelegate()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: app, delegateQueue: DispatchQueue(label: "pongs"))
        try listener.start()
        defer { listener.stop() }
        let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/")
        try await connection.send(.pong(Data("beat 1".utf8)))
        await #expect(throws: WebSocketProtocolHandler.SendError.pingTooLong(126)) { try await connection.send(.pong(Data(count: 126))) }
        try await connection.send(.pong(Data("beat 2".utf8)))
        try await connection.send(.close(WebSocketClosePayload(code: .goingAway, reason: "done")))
        let heard = try await app.events.next(3)
        #expect(heard == ["pong beat 1", "pong beat 2", "closed 1001 done"])
        #expect(await connection.closeResult == WebSocketCloseResult(code: .goingAway, reason: "", wasClean: true))
        await #expect(throws: WebSocketProtocolHandler.SendError.closing) { try await connection.send(.pong(Data())) }
    }
}
