import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import WebSocket

/// What a testee connection does, as Autobahn's test peers: echoes every message with its type (pings
/// are answered by the library), and keeps how the connection ended for the harness to check.
final class EchoConnection: WebSocketDelegate {
    private let result = LockedValue<WebSocketCloseResult?>(nil)
    private let failure = LockedValue<WebSocketConnectError?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        default: break
        }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        self.result.withLock { $0 = result }
        ended.signal()
    }

    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
        failure.withLock { $0 = error }
        ended.signal()
    }

    /// How the connection ended, waiting (this thread blocks: never call it on the cooperative pool) until
    /// `deadline`; nil if it did not end in time or never opened.
    func closeResult(before deadline: ContinuousClock.Instant) -> Result<WebSocketCloseResult, RawPeerError> {
        let left = max(0, (deadline - ContinuousClock.now) / .milliseconds(1))
        guard ended.wait(timeout: .now() + .milliseconds(Int(left))) == .success else {
            return .failure(RawPeerError("the testee did not report its close in time"))
        }
        ended.signal()  // later calls see it too
        if let result = result.withLock({ $0 }) { return .success(result) }
        return .failure(RawPeerError("the testee failed to connect: \(failure.withLock { $0 }.map { "\($0)" } ?? "?")"))
    }
}

/// Our server under test: a ``WebSocketListener`` on 127.0.0.1 (keep-alive off: its Pings would be
/// replies no case expects) whose connections echo; they arrive in the order the fuzzer opens them.
final class EchoServerTestee: WebSocketListenerDelegate {
    private let connections = LockedValue<[(WebSocket, EchoConnection)]>([])
    private let accepted = DispatchSemaphore(value: 0)
    private let queue = DispatchQueue(label: "conformance-server")
    private let listener = LockedValue<WebSocketListener?>(nil)

    /// Starts listening.
    func start() throws -> UInt16 {
        var configuration = WebSocketListener.Configuration(port: 0)
        configuration.connection = WebSocketProtocolHandler(role: .server, keepAlive: nil)
        let listener = WebSocketListener(configuration: configuration, delegate: self, delegateQueue: queue)
        try listener.start()
        self.listener.withLock { $0 = listener }
        return listener.port
    }

    func stop() { listener.withLock { $0?.stop() } }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        let connection = EchoConnection()
        webSocket.delegate = connection
        connections.withLock { $0.append((webSocket, connection)) }
        accepted.signal()
    }

    /// The `index`th connection accepted (from 0), waiting (blocking) until `deadline`.
    func connection(_ index: Int, before deadline: ContinuousClock.Instant) throws -> EchoConnection {
        while true {
            if let found = connections.withLock({ $0.count > index ? $0[index].1 : nil }) { return found }
            let left = max(0, (deadline - ContinuousClock.now) / .milliseconds(1))
            guard accepted.wait(timeout: .now() + .milliseconds(Int(left))) == .success else {
                throw RawPeerError("the testee server accepted no connection \(index + 1)")
            }
        }
    }
}

/// Our client under test: a ``WebSocket`` made with `init(client:)` that connects to the fuzzing server
/// and echoes (keep-alive off).
struct EchoClientTestee {
    let webSocket: WebSocket
    let connection = EchoConnection()

    init(queue: DispatchQueue) {
        var configuration = WebSocket.ClientConfiguration()
        configuration.connection = WebSocketProtocolHandler(role: .client, keepAlive: nil)
        webSocket = WebSocket(client: configuration, delegate: connection, delegateQueue: queue)
    }
}
