import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// A listener that accepts every upgrade and records what it accepted.
private final class AcceptingListenerDelegate: WebSocketListenerDelegate {
    let accepted = EventRecorder<String>()

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        accepted.record("accepted \(request.target)")
    }
}

/// The listener's bounds on the opening handshake (RFC 6455 §4.2.1, issue 33): a request head over its
/// size is answered 431, a head not finished within the handshake timeout (a slowloris, one byte at a
/// time) is closed at the timeout counted from the connection's start, not from its last byte (in
/// virtual time), and bad requests get their HTTP error answer, each for that connection only.
@Suite(.offThePool) struct WebSocketListenerLimitsTests {
    /// A listener on `group` with `configure` applied, and a plain TCP client connected to it.
    static func start(
        group: EventLoopGroup = .shared, _ configure: (inout WebSocketListener.Configuration) -> Void = { _ in }
    ) async throws -> (WebSocketListener, AcceptingDelegateBox, TCPSocket, RecordingDelegate) {
        var configuration = WebSocketListener.Configuration(port: 0)
        configure(&configuration)
        let delegate = AcceptingListenerDelegate()
        let listener = WebSocketListener(
            configuration: configuration, delegate: delegate, delegateQueue: DispatchQueue(label: "listener"), group: group)
        try listener.start()
        let recorder = RecordingDelegate()
        let client = TCPSocket(delegate: recorder, delegateQueue: nil)
        try client.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: TestTiming.hangTimeout(10))
        #expect(
            try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) == .connected(host: "127.0.0.1", port: listener.port)
        )
        return (listener, AcceptingDelegateBox(delegate), client, recorder)
    }

    /// The head of the server's answer, as text ("" when the server closed without one).
    static func answer(_ client: TCPSocket, _ recorder: RecordingDelegate) async throws -> String {
        client.readData(to: Data("\r\n\r\n".utf8), withTimeout: TestTiming.hangTimeout(10), tag: 9)
        for _ in 0..<8 {
            switch try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) {
            case .read(let data, tag: 9): return String(decoding: data, as: UTF8.self)
            case .disconnected: return ""
            default: continue
            }
        }
        return ""
    }

    @Test func aHeadNotFinishedWithinTheHandshakeTimeoutIsClosedHoweverSlowlyItTrickles() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "slowloris")
        defer { group.shutdown() }
        let (listener, _, client, recorder) = try await Self.start(group: group) { $0.handshakeTimeout = .seconds(10) }
        defer { listener.stop() }
        // One byte of the head every second: each arrives, none restarts the timeout.
        let head = Array("GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        for (second, byte) in head.prefix(9).enumerated() {
            client.write(Data([byte]), withTimeout: -1, tag: second)
            #expect(try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) == .wrote(tag: second))
            await clock.advance(by: .seconds(1))
        }
        #expect(client.isConnected)
        client.readData(withTimeout: -1, tag: 9)
        await clock.advance(by: .milliseconds(999))
        #expect(client.isConnected, "closed before 10 s")
        await clock.advance(by: .milliseconds(1))
        // The server closes without an answer: no bytes, then the end.
        let end = try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10)))
        #expect(end == .disconnected(nil) || end == .disconnected(.closedByPeer), "\(end)")
    }

    @Test func aHeadOverTheLimitIsAnswered431AndClosed() async throws {
        let (listener, box, client, recorder) = try await Self.start { $0.maxHeadBytes = 256 }
        defer { listener.stop() }
        let request = "GET / HTTP/1.1\r\nHost: a\r\nX-Padding: \(String(repeating: "p", count: 300))\r\n\r\n"
        client.write(Data(request.utf8), withTimeout: -1, tag: 1)
        let answer = try await Self.answer(client, recorder)
        #expect(answer.hasPrefix("HTTP/1.1 431 "), "\(answer)")
        #expect(box.delegate.accepted.all.isEmpty)
    }

    @Test func aRequestThatIsNotHTTPIsAnswered400AndAnotherVersion426WithVersion13() async throws {
        let (listener, box, client, recorder) = try await Self.start()
        defer { listener.stop() }
        client.write(Data("HELLO\r\n\r\n".utf8), withTimeout: -1, tag: 1)
        #expect(try await Self.answer(client, recorder).hasPrefix("HTTP/1.1 400 "))

        let second = RecordingDelegate()
        let other = TCPSocket(delegate: second, delegateQueue: nil)
        try other.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: TestTiming.hangTimeout(10))
        let upgrade = [
            "GET /chat HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 8", "", ""
        ].joined(separator: "\r\n")
        other.write(Data(upgrade.utf8), withTimeout: -1, tag: 1)
        let answer = try await Self.answer(other, second)
        #expect(answer.hasPrefix("HTTP/1.1 426 "), "\(answer)")
        #expect(answer.lowercased().contains("sec-websocket-version: 13\r\n"), "\(answer)")
        #expect(box.delegate.accepted.all.isEmpty)
    }

    /// ``WebSocketListener/Configuration/responseHeaders`` end every answer the listener writes: the
    /// default `426` to an ordinary request, a `400` refusal, a `431`, and the `101` of an accepted upgrade.
    @Test func responseHeadersEndTheListenersOwnAnswersAndThe101() async throws {
        let upgrade = [
            "GET /chat HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13", "", ""
        ].joined(separator: "\r\n")
        let requests = [
            "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
            upgrade.replacingOccurrences(of: "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", with: ""),
            "GET / HTTP/1.1\r\nHost: a\r\nX-Padding: \(String(repeating: "p", count: 300))\r\n\r\n", upgrade
        ]
        let fields = "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n\r\n"
        let expected = [
            "HTTP/1.1 426 Upgrade Required\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 27\r\n"
                + "Connection: close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\(fields)",
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\nConnection: close\r\n\(fields)",
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 28\r\n"
                + "Connection: close\r\n\(fields)",
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\(fields)"
        ]
        for (request, answer) in zip(requests, expected) {
            let (listener, box, client, recorder) = try await Self.start {
                $0.maxHeadBytes = 256
                $0.responseHeaders = [("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY")]
            }
            defer { listener.stop() }
            client.write(Data(request.utf8), withTimeout: -1, tag: 1)
            let got = try await Self.answer(client, recorder)
            #expect(got == answer, "\(got.debugDescription)")
            withExtendedLifetime(box) {}
            client.disconnect()
        }
    }
}

/// The listener's delegate, kept alive by the test (the listener holds it weakly).
struct AcceptingDelegateBox: Sendable {
    fileprivate let delegate: AcceptingListenerDelegate
    fileprivate init(_ delegate: AcceptingListenerDelegate) { self.delegate = delegate }
}
