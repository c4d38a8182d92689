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
/// Delegate calls arrive on the connections' event loop threads (the listener's `delegateQueue` is
/// `nil`: no thread hop per message, each echo goes out with the read that brought it). Messages come
/// borrowed (``WebSocketBorrowingDelegate``) and go back with `send(copying:opcode:)`: no `Data` or
/// `String` per message, the payload copied once into the socket's write staging. The set of open
/// connections is kept under a lock. ``start(port:)`` and ``stop()`` may be called from any thread.
public final class WebSocketEchoServer: WebSocketListenerDelegate, WebSocketBorrowingDelegate, @unchecked Sendable {
    /// The only path (request target without its query) upgraded, or nil for any.
    public let path: String?
    /// Whether permessage-deflate (RFC 7692) is offered to clients that ask for it.
    public let deflate: Bool
    private let group: EventLoopGroup
    private let listener = LockedValue<WebSocketListener?>(nil)
    /// The open connections (the listener keeps no reference).
    private let connections = LockedValue<[ObjectIdentifier: WebSocket]>([:])

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
        let listener = WebSocketListener(configuration: configuration, delegate: self, delegateQueue: nil, group: group)
        try listener.start()
        self.listener.withLock { $0 = listener }
        return listener.port
    }

    /// Stops listening and closes every open connection with 1001 (going away).
    public func stop() {
        listener.withLock { $0 }?.stop()
        for webSocket in connections.withLock({ Array($0.values) }) { webSocket.close(code: .goingAway) }
    }

    /// The number of open connections (any thread).
    public var connectionCount: Int { connections.withLock { $0.count } }

    // MARK: WebSocketListenerDelegate (the connection's loop)

    public func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        guard let path else { return .accept() }
        let requested = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return requested == path ? .accept() : .refuse(statusCode: 404, text: "no WebSocket at this path")
    }

    public func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        webSocket.delegate = self
        // No use for didSendMessageWithTag: no write-tag entry and no delegate call per echo.
        webSocket.reportsSends = false
        connections.withLock { $0[ObjectIdentifier(webSocket)] = webSocket }
    }

    // MARK: WebSocketDelegate (the connection's loop)

    public func webSocket(_ webSocket: WebSocket, didReceive bytes: UnsafeRawBufferPointer, opcode: WebSocketOpcode) {
        webSocket.send(copying: bytes, opcode: opcode)
    }

    /// Not called while messages come borrowed (above); kept for a delegate queue.
    public func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        case .ping, .pong, .close: break  // answered by the library
        }
    }

    public func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        connections.withLock { $0[ObjectIdentifier(webSocket)] = nil }
    }
}
