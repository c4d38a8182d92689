import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// permessage-deflate against a peer nobody here wrote: Python `websockets` (Debian python3-websockets,
/// `Tests/Interop/ws_peer.py --deflate`), as client and as server, compression on in both directions.
@Suite(.cpuBound) struct WebSocketPythonDeflateInteropTests {
    typealias Base = WebSocketPythonInteropTests

    /// Python's client offers deflate (its default: `server_max_window_bits=12; client_max_window_bits=12`
    /// style), our listener agrees with its defaults; the text, the 256 byte values, the fragmented text
    /// (RSV1 on its first frame only) and 10 MB of binary come back, and the close code is echoed.
    @Test func thePythonClientCompressesAndInflatesThroughOurListener() async throws {
        let echo = EchoListenerDelegate()
        let listener = try echo.start { $0.deflate = PerMessageDeflate.ServerConfiguration() }
        defer { listener.stop() }
        let output = try await runOnAThread { () throws -> Data in
            let client = try ChildProcess(
                "/usr/bin/python3", [Base.script, "client", "--deflate", "--url", "ws://127.0.0.1:\(listener.port)/chat"])
            defer { client.stop() }
            guard client.waitForExit(within: TestTiming.hangLimit(.seconds(60))) != nil else {
                throw WaitTimedOut(description: "ws_peer.py did not finish")
            }
            return client.allOutput
        }
        let result = try JSONDecoder().decode(Base.PeerResult.self, from: output)
        #expect(result.error == nil)
        #expect(result.ok && result.echoes == 4 && result.extensions == ["permessage-deflate"] && result.close_code == 4000)
        let accepted = try await echo.events.next(within: TestTiming.hangLimit(.seconds(10)))
        #expect(accepted.hasPrefix("accepted /chat [\"permessage-deflate; server_no_context_takeover"))
    }

    /// Our client offers deflate to Python's server (`--deflate`): messages both ways compressed, a
    /// megabyte of text among them, and the close handshake.
    @Test func ourClientCompressesAndInflatesWithThePythonServer() async throws {
        let server = try ChildProcess("/usr/bin/python3", [Base.script, "server", "--deflate", "--port", "0"])
        defer { server.stop() }
        let listening = try await server.lines.next(within: TestTiming.hangLimit(.seconds(30)))
        let port = try #require(listening.split(separator: " ").last.map(String.init))
        let recorder = RecordingWebSocketDelegate()
        var configuration = WebSocket.ClientConfiguration()
        configuration.deflate = PerMessageDeflate.ClientConfiguration()
        let client = WebSocket(client: configuration, delegate: recorder, delegateQueue: DispatchQueue(label: "client"))
        try client.connect(to: "ws://127.0.0.1:\(port)/echo")
        let limit = TestTiming.hangLimit(.seconds(20))
        #expect(try await recorder.events.next(within: limit) == "open - [\"permessage-deflate\"]")
        #expect(client.extensions.first?.name == "permessage-deflate")
        client.send(text: "grüße")
        #expect(try await recorder.events.next(within: limit) == "text grüße")
        client.send(text: "grüße")
        #expect(try await recorder.events.next(within: limit) == "text grüße")
        client.send(data: Data(repeating: 7, count: 70_000))
        #expect(try await recorder.events.next(within: limit) == "binary 70000 bytes")
        let text = String(repeating: "0123456789abcdef✓", count: 55_000)  // 1,100,000 bytes
        client.send(text: text)
        #expect(try await recorder.events.next(within: limit) == "text \(text)")
        client.close(code: WebSocketCloseCode(rawValue: 4001), reason: "done")
        #expect(try await recorder.events.next(within: limit) == "closed 4001 \"done\" (clean)")
        #expect(try await server.lines.next(within: limit) == "closed 4001 done")
    }
}
