import AsyncSocket
import Foundation
import SocketFraming

/// A WebSocket server whose accepted connections arrive as an `AsyncSequence` of
/// ``WebSocketConnection``s: the async face of ``WebSocketListener``, as `TCPListener` is of a
/// listening `TCPSocket`.
///
/// ```swift
/// var options = WebSocketConnectionListener.Options()
/// options.shouldAccept = { request in
///     request.origin == "https://chat.example" ? .accept() : .refuse(statusCode: 403, text: "origin not allowed")
/// }
/// let listener = try await WebSocketConnectionListener.bind(configuration: .init(port: 8080), options: options)
/// for await connection in listener {
///     Task {
///         for await message in connection.messages { try await connection.send(message) }
///     }
/// }
/// ```
///
/// Upgrades are accepted as they arrive, whether or not a task is iterating: the listener reads each
/// request head, checks it (RFC 6455 §4.2.1), asks ``Options/shouldAccept``, and answers `101`. Up to
/// ``Options/maxPendingConnections`` accepted connections wait for the iteration; while that many
/// wait, further upgrades are refused with `503 Service Unavailable` (RFC 9110 §15.6.4) before the
/// switch, so a client sees a typed handshake error (`.handshake(.unexpectedStatus(503))`) rather than
/// a connection opened and dropped. Requests that are not upgrades get ``Options/httpRequestHandler``'s
/// answer, `426 Upgrade Required` by default.
///
/// Iteration ends (`next()` returns nil) when the listener is closed (``close()``), and, for the
/// iterating task only, when that task is cancelled: the listener goes on accepting for other
/// iterations. An iterator keeps its listener alive; once neither the app nor any iterator holds it,
/// it stops listening. Connections already handed out are never affected.
///
/// Threading: every member may be used from any task. ``Options/shouldAccept`` runs on the listener's
/// own serial queue.
public final class WebSocketConnectionListener: AsyncSequence, Sendable {
    /// The elements: connections whose opening handshake is done.
    public typealias Element = WebSocketConnection

    /// The default bound on accepted connections waiting for the iteration: 128 (as `TCPListener`'s).
    public static let defaultMaxPendingConnections = 128

    /// How the app decides about requests, and how many accepted connections may wait.
    public struct Options: Sendable {
        /// Accepted connections that may wait for the iteration (at least 1); while that many wait,
        /// upgrades are refused with 503. Default ``WebSocketConnectionListener/defaultMaxPendingConnections``.
        public var maxPendingConnections = WebSocketConnectionListener.defaultMaxPendingConnections

        /// Asked for each upgrade request that passed RFC 6455 §4.2.1's checks, on the listener's queue
        /// (return quickly): accept, with a subprotocol the client offered (``WebSocketConnection/subprotocol``;
        /// one it did not offer is ignored), or refuse with a status (403 for a foreign `Origin`).
        /// Default: accept, no subprotocol.
        public var shouldAccept: @Sendable (WebSocketUpgradeRequest) -> WebSocketUpgradeDecision = { _ in .accept() }

        /// Answers an ordinary HTTP request (not an upgrade) on the same port, a page say; the
        /// connection is closed once the answer is written. Runs in a task of its own. Nil (the
        /// default): `426 Upgrade Required` with `Upgrade: websocket` and `Sec-WebSocket-Version: 13`.
        public var httpRequestHandler: (@Sendable (HTTPRequestHead) async -> HTTPResponse)?

        /// The defaults above, with `maxPendingConnections`.
        public init(maxPendingConnections: Int = WebSocketConnectionListener.defaultMaxPendingConnections) {
            self.maxPendingConnections = maxPendingConnections
        }
    }

    /// The listener's settings (address, request limits, each connection's protocol settings).
    public let configuration: WebSocketListener.Configuration
    /// The app's decisions and the pending bound, as given to ``bind(configuration:options:group:)``.
    public let options: Options
    private let listener: WebSocketListener
    private let bridge: AsyncWebSocketListenerBridge

    /// A listener listening.
    private init(configuration: WebSocketListener.Configuration, options: Options, group: EventLoopGroup) throws(SocketError) {
        self.configuration = configuration
        self.options = options
        bridge = AsyncWebSocketListenerBridge(options: options)
        listener = WebSocketListener(
            configuration: configuration, delegate: bridge, delegateQueue: DispatchQueue(label: "WebSocketConnectionListener"),
            group: group)
        try listener.start()
        port = listener.port
    }

    deinit {
        bridge.finish()
        listener.stop()
    }

    /// Listens on `configuration`'s host and port (port 0: one the kernel picks, read it from ``port``).
    /// - Returns: once listening: connects succeed from then on.
    /// - Throws: `SocketError` when the address cannot be bound (`.addressInUse`, say), or
    ///   `.badParam` for a ``Options/maxPendingConnections`` below 1.
    public static func bind(
        configuration: WebSocketListener.Configuration, options: Options = Options(), group: EventLoopGroup = .shared
    ) async throws(SocketError) -> WebSocketConnectionListener {
        guard options.maxPendingConnections >= 1 else { throw .badParam("maxPendingConnections must be at least 1") }
        return try WebSocketConnectionListener(configuration: configuration, options: options, group: group)
    }

    /// The port listened on (the kernel's choice for port 0); stays readable after ``close()``.
    public let port: UInt16

    /// Stops listening and returns once the listening socket is closed (connects are refused from then
    /// on). Connections accepted but not yet handed to the iteration are closed with 1001 (going
    /// away); iterations end. Connections already handed out go on. Calling it again returns at once.
    public func close() async {
        bridge.finish()
        await listener.stopAndWait()
    }

    /// Accepted connections waiting for the iteration (for tests).
    package var pendingConnections: Int { bridge.pendingConnections }

    /// Makes an iterator over the accepted connections; iterators share the listener's queue, each
    /// connection goes to one `next()` call.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(listener: self) }

    /// Hands out accepted connections, oldest first. Holds its listener.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let listener: WebSocketConnectionListener

        /// The next accepted connection, waiting for one; nil once the listener is closed, or when the
        /// calling task is cancelled (the listener stays open).
        public mutating func next() async -> WebSocketConnection? { await listener.bridge.next() }
    }
}
