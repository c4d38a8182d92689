import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import WebSocket

/// A WebSocket echo server on our own stack, for peers and benchmarks (issue 33 §4): a
/// ``WebSocketListener`` with the library's default limits (16 MiB a frame, 64 MiB a message, close
/// timeout 10 s, keep-alive pings 20 s / 20 s) that upgrades requests for any path (or only ``path``:
/// others get `404 Not Found`) and sends every message back as it came, text as text and binary as
/// binary. Pings are answered and the closing handshake echoes the peer's code by the library itself.
///
/// Delegate calls arrive on one serial queue, ``delegateQueue``; ``start(port:)`` and ``stop()`` may be
/// called from any thread.
public final class WebSocketEchoServer: WebSocketListenerDelegate, WebSocketDelegate, @unchecked Sendable {
    /// The only path (request target without its query) upgraded, or nil for any.
    public let path: String?
    /// Whether permessage-deflate (RFC 7692) is offered to clients that ask for it.
    public let deflate: Bool
    /// Where every delegate call of the listener and its connections arrives.
    public let delegateQueue = DispatchQueue(label: "socket-bench.websocket")
    private let group: EventLoopGroup
    private var listener: WebSocketListener?
    /// The open connections (the listener keeps no reference), confined to ``delegateQueue``.
    private var connections: [ObjectIdentifier: WebSocket] = [:]

    /// - Parameters:
    ///   - path: upgrade only requests for this path (`/chat`), nil for any.
    ///   - deflate: negotiate permessage-deflate with clients that offer it.
    ///   - loops: event-loop threads serving the connections (at least 1).
    public init(path: String? = nil, deflate: Bool = false, loops: Int = 1) {
        self.path = path
        self.deflate = deflate
        group = EventLoopGroup(numberOfThreads: max(1, loops), name: "socket-bench-ws")
    }

    /// Listens on `host`:`port` and returns the port listened on (the kernel's pick when `port` is 0).
    /// - Throws: `SocketError` when the address cannot be bound.
    public func start(host: String = "127.0.0.1", port: UInt16) throws(SocketError) -> UInt16 {
        var configuration = WebSocketListener.Configuration(host: host, port: port)
        if deflate { configuration.deflate = PerMessageDeflate.ServerConfiguration() }
        let listener = WebSocketListener(configuration: configuration, delegate: self, delegateQueue: delegateQueue, group: group)
        try listener.start()
        delegateQueue.sync { self.listener = listener }
        return listener.port
    }

    /// Stops listening and closes every open connection with 1001 (going away).
    public func stop() {
        delegateQueue.sync {
            listener?.stop()
            for webSocket in connections.values { webSocket.close(code: .goingAway) }
        }
    }

    /// The number of open connections (any thread; waits for the delegate queue).
    public var connectionCount: Int { delegateQueue.sync { connections.count } }

    // MARK: WebSocketListenerDelegate (delegateQueue)

    public func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        guard let path else { return .accept() }
        let requested = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return requested == path ? .accept() : .refuse(statusCode: 404, text: "no WebSocket at this path")
    }

    public func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        webSocket.delegate = self
        connections[ObjectIdentifier(webSocket)] = webSocket
    }

    // MARK: WebSocketDelegate (delegateQueue)

    public func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        case .ping, .pong, .close: break  // answered by the library
        }
    }

    public func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        connections[ObjectIdentifier(webSocket)] = nil
    }
}
