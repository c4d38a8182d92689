import AsyncSocket
import Dispatch
import Foundation
import SocketFraming

/// A WebSocket connection for async/await: ``connect(to:configuration:group:)-(String,_,_)``, ``messages`` as an
/// `AsyncSequence` with backpressure (reading pauses once 64 messages wait to be taken: the frames of
/// the read under way are still decoded, then the socket is not read until 16 are left), ``send(_:)``
/// that suspends while the socket's write queue is over its high watermark
/// (``defaultWriteHighWatermark`` unless the socket's was set), and ``close(code:reason:)`` that returns
/// how the connection ended. The async face of ``WebSocket``, as `TCPConnection` is of
/// `TCPSocket`.
public final class WebSocketConnection: Sendable {
    /// The connection underneath.
    public let webSocket: WebSocket
    /// The subprotocol the server chose (one the client offered), or nil.
    public let subprotocol: String?
    /// The client's upgrade request (its target, `Origin`, headers) on a connection a
    /// ``WebSocketConnectionListener`` accepted; nil on a client's.
    public let request: WebSocketUpgradeRequest?
    private let bridge: AsyncWebSocketBridge

    init(webSocket: WebSocket, bridge: AsyncWebSocketBridge, subprotocol: String?, request: WebSocketUpgradeRequest? = nil) {
        self.webSocket = webSocket
        self.bridge = bridge
        self.subprotocol = subprotocol
        self.request = request
    }

    /// The write queue's high watermark the async face gives a socket whose own is off (`TCPSocket`'s
    /// default, `Int.max`): 1 MiB (1,048,576 bytes). ``send(_:)`` waits while more is queued, so a peer
    /// that stops reading holds this much memory and a few messages, not everything the app sends.
    public static let defaultWriteHighWatermark = 1 << 20
    /// The low watermark that goes with it: 256 KiB (262,144 bytes); waiting sends resume at or below it.
    public static let defaultWriteLowWatermark = 256 << 10

    /// Gives `socket` the default watermarks unless it has a high watermark of its own (set on it or, for
    /// an accepted one, on its listener). Before reading starts.
    static func applyDefaultWatermarks(to socket: TCPSocket) {
        guard socket.writeHighWatermark == Int.max else { return }
        socket.writeHighWatermark = defaultWriteHighWatermark
        socket.writeLowWatermark = defaultWriteLowWatermark
    }

    /// Connects to `url` and completes the opening handshake (see ``WebSocket/connect(to:)``).
    /// - Throws: ``WebSocketConnectError``.
    public static func connect(
        to url: String, configuration: WebSocket.ClientConfiguration = WebSocket.ClientConfiguration(), group: EventLoopGroup = .shared
    ) async throws(WebSocketConnectError) -> WebSocketConnection {
        let bridge = AsyncWebSocketBridge()
        let webSocket = WebSocket(
            client: configuration, delegate: bridge, delegateQueue: DispatchQueue(label: "WebSocketConnection"), group: group)
        bridge.webSocket = webSocket
        webSocket.reportsSends = false
        applyDefaultWatermarks(to: webSocket.socket)
        try webSocket.connect(to: url)
        do {
            let (subprotocol, _) = try await bridge.opened()
            return WebSocketConnection(webSocket: webSocket, bridge: bridge, subprotocol: subprotocol)
        } catch let error as WebSocketConnectError {
            throw error
        } catch {
            throw .socket(.connectionClosed)
        }
    }

    /// Connects to `url` (`ws://…` or `wss://…`, as issue 33 and `URLSessionWebSocketTask` name it);
    /// the same as ``connect(to:configuration:group:)-(String,_,_)`` with its `absoluteString`.
    /// - Throws: ``WebSocketConnectError``.
    public static func connect(
        to url: URL, configuration: WebSocket.ClientConfiguration = WebSocket.ClientConfiguration(), group: EventLoopGroup = .shared
    ) async throws(WebSocketConnectError) -> WebSocketConnection {
        try await connect(to: url.absoluteString, configuration: configuration, group: group)
    }

    /// The messages received (text and binary), in order; the sequence ends when the connection is
    /// closed (``closeResult`` says how) or the iterating task is cancelled. One iterator at a time.
    public var messages: Messages { Messages(bridge: bridge) }

    /// Sends `message` after waiting while the write queue is over its high watermark
    /// (``defaultWriteHighWatermark`` unless set on the socket): `.text` or `.binary`; `.ping` or `.pong`
    /// (an unsolicited one: a one-way heartbeat, RFC 6455 §5.5.3) with at most 125 bytes; `.close`
    /// starts the closing handshake as ``close(code:reason:)`` does, without waiting for its end.
    /// - Throws: ``WebSocketProtocolHandler/SendError/closing`` once the connection is closing or closed;
    ///   ``WebSocketProtocolHandler/SendError/pingTooLong(_:)`` for a ping or pong over 125 bytes.
    public func send(_ message: WebSocketMessage) async throws(WebSocketProtocolHandler.SendError) {
        guard await bridge.waitUntilWritable() else { throw .closing }
        switch message {
        case .ping(let payload), .pong(let payload): guard payload.count <= 125 else { throw .pingTooLong(payload.count) }
        case .text, .binary, .close: break
        }
        // Checked and queued in one step on the loop: a send after a Close (this side's or the peer's)
        // throws, however soon after it comes (§5.5.1). Once this returns, the watermark the message
        // crossed, if any, is in the bridge: the next send waits. (Without the wait for the loop, a
        // burst of sends all pass the check before the loop queues the first, and nothing bounds the
        // queue.)
        let webSocket = webSocket
        let refusal = await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketProtocolHandler.SendError?, Never>) in
            webSocket.socket.eventLoop.execute { continuation.resume(returning: webSocket.sendNow(message)) }
        }
        if let refusal { throw refusal }
    }

    /// Starts the closing handshake and returns how the connection ended.
    @discardableResult
    public func close(code: WebSocketCloseCode? = .normalClosure, reason: String = "") async -> WebSocketCloseResult {
        webSocket.close(code: code, reason: reason)
        return await bridge.closeResult()
    }

    /// Whether reading is paused because ``AsyncWebSocketBridge/highWater`` messages wait to be taken
    /// (for tests).
    package var isReadingPaused: Bool { bridge.state.withLock { $0.readPaused } }

    /// How many received messages wait to be taken (for tests).
    package var bufferedMessages: Int { bridge.state.withLock { $0.buffered.count } }

    /// How the connection ended, once it has.
    public var closeResult: WebSocketCloseResult {
        get async { await bridge.closeResult() }
    }

    /// ``WebSocketConnection/messages``.
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = WebSocketMessage
        let bridge: AsyncWebSocketBridge

        public func makeAsyncIterator() -> Iterator { Iterator(bridge: bridge) }

        /// Takes the next message (nil at the end).
        public struct Iterator: AsyncIteratorProtocol {
            let bridge: AsyncWebSocketBridge

            public mutating func next() async -> WebSocketMessage? { await bridge.next() }
        }
    }
}
