import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Synchronization

/// The server side of long-lived connections: accepts many clients, keeps a ``Session`` per client,
/// answers heartbeats without bothering the app (each acknowledgement goes out after the app has
/// handled the messages that arrived before the heartbeat, so a client can use a heartbeat as a
/// barrier), drops clients silent for longer than the idle timeout,
/// and sends to one client or to all.
///
/// ```swift
/// let server = LongLinkServer(codec: ChatCodec(), configuration: .init(port: 7000), eventQueue: queue) { event in
///     if case .received(let message, let session) = event { session.send(reply(to: message)) }
/// }
/// try server.start()
/// ```
///
/// Threading: methods may be called from any thread. Each session lives on its connection's event
/// loop; events reach `onEvent` on `eventQueue` (or on the connection's loop thread when it is `nil`),
/// in order for each session.
public final class LongLinkServer<Codec: LinkCodec>: @unchecked Sendable {
    /// Where to listen and when to give up on a silent client.
    public struct Configuration: Sendable {
        /// The interface to listen on: a numeric address or a host name; `nil` = every interface.
        /// Default `"127.0.0.1"`.
        public var host: String? = "127.0.0.1"
        /// The TCP port; 0 = a free port (read it from ``LongLinkServer/port``).
        public var port: UInt16
        /// A client from which no whole message (not even a heartbeat) arrives for this long is dropped
        /// with ``CloseReason/idleTimeout``; bytes of an unfinished frame do not count. Default 360 s: two of the clients' default 180 s heartbeats.
        public var idleTimeout: Duration = .seconds(360)
        /// The `listen(2)` backlog. Default 1,024 connections.
        public var backlog: Int32 = 1024
        /// `SO_REUSEPORT` on the listening socket (``TCPSocket/isReusePortEnabled``): several server
        /// processes (or a socket that holds the port until the server has it) share the port. Default off.
        public var isReusePortEnabled = false
        /// Bytes that may wait to be written to one client. A client that reads slower than it is sent
        /// to (or not at all) and lets more pile up is dropped with ``CloseReason/slowConsumer(queuedBytes:)``,
        /// so it cannot make the server's memory grow without bound. Default 4 MiB.
        public var maxQueuedBytesPerSession = 4 << 20

        /// A configuration for `port` on 127.0.0.1 with the defaults above.
        public init(host: String? = "127.0.0.1", port: UInt16) {
            self.host = host
            self.port = port
        }
    }

    /// Why a session ended.
    public enum CloseReason: Sendable, Equatable, CustomStringConvertible {
        /// The app closed it (``Session/close()``) or the server stopped.
        case byServer
        /// The client closed the connection cleanly.
        case byClient
        /// Nothing arrived from the client for ``Configuration/idleTimeout``.
        case idleTimeout
        /// The network broke the connection (reset, for example).
        case network(SocketError)
        /// The client sent bytes that are not a valid frame or message.
        case protocolError(String)
        /// More than ``Configuration/maxQueuedBytesPerSession`` bytes waited to be written to the client.
        case slowConsumer(queuedBytes: Int)

        public var description: String {
            switch self {
            case .slowConsumer(let bytes): return "slow consumer: \(bytes) bytes unsent"
            case .byServer: return "closed by server"
            case .byClient: return "closed by client"
            case .idleTimeout: return "idle timeout"
            case .network(let error): return "network: \(error)"
            case .protocolError(let why): return "protocol error: \(why)"
            }
        }
    }

    /// What the server tells the app.
    public enum Event: Sendable {
        /// A client connected.
        case opened(Session)
        /// A message from a client (never a heartbeat).
        case received(Codec.Message, from: Session)
        /// A client's session ended.
        case closed(Session, CloseReason)
    }

    /// The codec given at creation.
    public let codec: Codec
    /// The configuration given at creation.
    public let configuration: Configuration
    private let events: EventSink<Event>
    private let listener: TCPSocket
    private let listenerCallbacks = SocketCallbacks()
    private let sessionTable = LockedValue<[Int: Session]>([:])
    private let sessionIDs = Atomic(0)

    /// Creates a server; it listens once ``start()`` is called.
    ///
    /// - Parameters:
    ///   - group: the loops connections are spread over.
    ///   - eventQueue: where `onEvent` runs; `nil` runs it on each connection's loop thread.
    public init(
        codec: Codec,
        configuration: Configuration,
        group: EventLoopGroup = .shared,
        eventQueue: DispatchQueue?,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.codec = codec
        self.configuration = configuration
        self.events = EventSink(queue: eventQueue, handler: onEvent)
        self.listener = TCPSocket(delegate: listenerCallbacks, delegateQueue: nil, group: group)
        listener.writeHighWatermark = configuration.maxQueuedBytesPerSession
        listenerCallbacks.didAccept = { [weak self] newSocket in self?.accepted(newSocket) }
    }

    private func accepted(_ socket: TCPSocket) {
        let id = sessionIDs.add(1, ordering: .relaxed).newValue
        let session = Session(id: id, socket: socket, server: self)
        sessionTable.withLock { $0[id] = session }
        socket.eventLoop.execute { session.start() }
    }

    /// Starts listening.
    /// - Throws: ``SocketError`` from `bind`/`listen` (`EADDRINUSE`, for example) or name resolution.
    public func start() throws(SocketError) {
        listener.isReusePortEnabled = configuration.isReusePortEnabled
        try listener.accept(onInterface: configuration.host, port: configuration.port, backlog: configuration.backlog)
    }

    /// The port listened on (the actual one when configured with 0), or 0 before ``start()``.
    public var port: UInt16 { listener.localPort }

    /// The address listened on, or `nil` before ``start()``.
    public var localAddress: SocketAddress? { listener.localAddress }

    /// The sessions open now.
    public var sessions: [Session] { sessionTable.withLock { Array($0.values) }.sorted { $0.id < $1.id } }

    /// Sends `message` to every open session. Encodes once.
    public func broadcast(_ message: Codec.Message) {
        send(message, to: sessions)
    }

    /// Sends `message` to each of `sessions`, encoding it once. Messages that cannot be encoded are dropped.
    public func send(_ message: Codec.Message, to sessions: some Sequence<Session>) {
        guard let data = try? codec.encode(message) else { return }
        for session in sessions { session.socket.write(data, withTimeout: -1, tag: 0) }
    }

    /// Stops listening and closes every session (reason ``CloseReason/byServer``).
    public func stop() {
        listener.disconnect()
        // The sessions close on the listener's loop, after the listening socket (its tasks run in
        // order): closed first from another loop, a session's client could reconnect at once and be
        // accepted by the listener that was still open.
        listener.eventLoop.execute { [self] in
            for session in sessions { session.close() }
        }
    }

    func emit(_ event: Event) { events.emit(event) }

    /// Runs `work` on the event queue after the events emitted before it.
    func afterEvents(_ work: @escaping @Sendable () -> Void) { events.perform(work) }

    func remove(_ session: Session) {
        _ = sessionTable.withLock { $0.removeValue(forKey: session.id) }
    }
}
