import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Refuses every upgrade with 403, noting its Origin.
final class RefusingListenerDelegate: WebSocketListenerDelegate {
    let origins = LockedValue<[String?]>([])

    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        origins.withLock { $0.append(request.origin) }
        return .refuse(statusCode: 403, text: "origin not allowed")
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {}
}

/// Our listener and WebSocket against a client nobody here wrote: the Python `websockets` library
/// (Debian python3-websockets, `Tests/Interop/ws_peer.py`).
@Suite(.cpuBound) struct WebSocketPythonInteropTests {
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
        let listener = try echo.start()
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
        #expect(try await echo.events.next(within: TestTiming.hangLimit(.seconds(10))) == "accepted /chat []")
        #expect(try await echo.events.next(within: TestTiming.hangLimit(.seconds(10))) == "closed 4000 \"bye\" (clean) after 4 echoes")
    }

    @Test func ourClientAgainstThePythonServerMessagesBothWaysAndTheCloseHandshake() async throws {
        let server = try ChildProcess("/usr/bin/python3", [Self.script, "server", "--port", "0"])
        defer { server.stop() }
        let listening = try await server.lines.next(within: TestTiming.hangLimit(.seconds(30)))
        let port = try #require(listening.split(separator: " ").last.map(String.init))
        #expect(listening == "listening \(port)")
        let recorder = RecordingWebSocketDelegate()
        let client = WebSocket(client: WebSocket.ClientConfiguration(), delegate: recorder, delegateQueue: DispatchQueue(label: "client"))
        try client.connect(to: "ws://127.0.0.1:\(port)/echo?x=1")
        let limit = TestTiming.hangLimit(.seconds(10))
        #expect(try await recorder.events.next(within: limit) == "open - []")
        client.send(text: "grüße")
        #expect(try await recorder.events.next(within: limit) == "text grüße")
        client.send(data: Data(repeating: 7, count: 70_000))
        #expect(try await recorder.events.next(within: limit) == "binary 70000 bytes")
        client.sendPing(Data([1, 2]))
        #expect(try await recorder.events.next(within: limit) == "pong 0102")
        client.close(code: WebSocketCloseCode(rawValue: 4001), reason: "done")
        // websockets echoes the whole Close frame, reason included: the first Close received is the answer.
        #expect(try await recorder.events.next(within: limit) == "closed 4001 \"done\" (clean)")
        #expect(try await server.lines.next(within: limit) == "closed 4001 done")
    }

    @Test func aRefusedConnectAndAServerThatIsNotWebSocketAreTypedFailures() async throws {
        let recorder = RecordingWebSocketDelegate()
        let client = WebSocket(client: WebSocket.ClientConfiguration(), delegate: recorder, delegateQueue: DispatchQueue(label: "client"))
        #expect(throws: WebSocketConnectError.invalidURL("http://127.0.0.1/")) { try client.connect(to: "http://127.0.0.1/") }
        // Our listener refusing the upgrade (a foreign Origin, say): 403, a typed failure, no close.
        let refusing = RefusingListenerDelegate()
        let listener = WebSocketListener(configuration: .init(port: 0), delegate: refusing, delegateQueue: DispatchQueue(label: "listener"))
        try listener.start()
        defer { listener.stop() }
        var configuration = WebSocket.ClientConfiguration()
        configuration.headers = [("Origin", "http://elsewhere.example")]
        let refused = WebSocket(client: configuration, delegate: recorder, delegateQueue: DispatchQueue(label: "client"))
        try refused.connect(to: "ws://127.0.0.1:\(listener.port)/")
        #expect(
            try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10)))
                == "failed \(WebSocketConnectError.handshake(.unexpectedStatus(403)))")
        #expect(refusing.origins.withLock { $0 } == ["http://elsewhere.example"])
    }
}
