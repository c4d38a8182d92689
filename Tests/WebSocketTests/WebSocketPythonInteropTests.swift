import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Echoes every message back with its type; records the ends.
final class EchoListenerDelegate: WebSocketListenerDelegate, WebSocketDelegate {
    let events = EventRecorder<String>()
    private let sockets = LockedValue<[WebSocket]>([])

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        events.record("accepted \(request.target)")
        sockets.withLock { $0.append(webSocket) }
        webSocket.delegate = self
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        default: break
        }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        events.record("closed \(result)")
    }
}

/// Our listener and WebSocket against a client nobody here wrote: the Python `websockets` library
/// (Debian python3-websockets, `Tests/Interop/ws_peer.py`).
@Suite(.offThePool) struct WebSocketPythonInteropTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/ws_peer.py").path

    struct PeerResult: Decodable {
        let ok: Bool
        let echoes: Int
        let extensions: [String]
        let close_code: Int?
        let error: String?
    }

    @Test func thePythonClientsMessagesComeBackWholeAndItsCloseCodeIsEchoed() async throws {
        let echo = EchoListenerDelegate()
        let listener = WebSocketListener(
            configuration: .init(port: 0), delegate: echo, delegateQueue: DispatchQueue(label: "listener"))
        try listener.start()
        defer { listener.stop() }
        let output = try await runOnAThread { () throws -> Data in
            let client = try ChildProcess("/usr/bin/python3", [Self.script, "client", "--url", "ws://127.0.0.1:\(listener.port)/chat"])
            defer { client.stop() }
            guard client.waitForExit(within: TestTiming.hangLimit(.seconds(60))) != nil else {
                throw WaitTimedOut(description: "ws_peer.py did not finish")
            }
            return client.allOutput
        }
        let result = try JSONDecoder().decode(PeerResult.self, from: output)
        #expect(result.error == nil)
        #expect(result.ok && result.echoes == 4 && result.extensions.isEmpty && result.close_code == 4000)
        #expect(try await echo.events.next(within: TestTiming.hangLimit(.seconds(10))) == "accepted /chat")
        #expect(try await echo.events.next(within: TestTiming.hangLimit(.seconds(10))) == "closed 4000 \"bye\" (clean)")
    }
}
