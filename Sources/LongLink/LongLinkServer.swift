import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import SocketLog
import Synchronization

/// The server side of long-lived connections: accepts many clients, keeps a ``Session`` per client,
/// answers heartbeats without bothering the app (each acknowledgement goes out after the app has
/// handled the messages that arrived before the heartbeat, so a client can use a heartbeat as a
/// barrier), drops clients silent for longer than the idle timeout,
/// and sends to one client or to all.
///
/// Limits (``Configuration``): at most ``Configuration/maxConnections`` connections; a session the app
/// has not admitted (``Session/admit()``) within ``Configuration/admissionTimeout``, or whose started
/// frame is not whole within ``Configuration/frameTimeout``, is closed; so is one that sends a bad
/// frame, at once. Each of these refusals (``LinkRefusal``) is told to the client first, with the
/// codec's ``LinkCodec/farewell(_:version:)``, and reported to the app (``Event/refused(_:_:)``,
/// ``CloseReason``). ``shutDown(timeout:completion:)`` tells every client the server is going away.
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
        /// TLS for every connection (`TCPSocket/startTLS(_:)` with these server settings, before
        /// anything is read or written: refusals such as `serverFull` go out encrypted too). `nil` (the
        /// default): plaintext. The login deadline (``admissionTimeout``) includes the handshake.
        public var tls: TLSConfiguration?
        /// The `listen(2)` backlog. Default 1,024 connections.
        public var backlog: Int32 = 1024
        /// `SO_REUSEPORT` on the listening socket (`TCPSocket/isReusePortEnabled`): several server
        /// processes (or a socket that holds the port until the server has it) share the port. Default off.
        public var isReusePortEnabled = false
        /// Bytes that may wait to be written to one client. A client that reads slower than it is sent
        /// to (or not at all) and lets more pile up is dropped with ``CloseReason/slowConsumer(queuedBytes:)``,
        /// so it cannot make the server's memory grow without bound. Default 4 MiB.
        public var maxQueuedBytesPerSession = 4 << 20
        /// The most connections open at once. A connection accepted beyond it gets the codec's
        /// ``LinkCodec/farewell(_:version:)`` for ``LinkRefusal/serverFull(maxConnections:)`` and is closed
        /// once that is written (``Event/refused(_:_:)``); sessions already open are not affected. Default
        /// `ResourceLimits/defaultMaxConnections()` when the configuration is made: one descriptor per
        /// connection below the process's open-file soft limit, after 64 for everything else, at most
        /// 10,000 (960 with the usual soft limit of 1,024).
        public var maxConnections = ResourceLimits.defaultMaxConnections()
        /// How long a new session has to be admitted by the app (``Session/admit()``, called once the
        /// client has logged in, say), from its connect. A session not admitted by then is told
        /// ``LinkRefusal/admissionTimeout(_:)`` and closed (``CloseReason/admissionTimeout``), whatever it
        /// sent meanwhile (heartbeats included). `nil` (the default): no deadline.
        public var admissionTimeout: Duration?
        /// How long a frame may take from its first byte to its last. A session holding the bytes of an
        /// unfinished frame for longer (a slowloris: a header, then silence or a trickle) is told
        /// ``LinkRefusal/frameTimeout(_:)`` and closed (``CloseReason/frameTimeout``), instead of being
        /// held until the idle timeout. `nil` (the default): no deadline.
        public var frameTimeout: Duration?
        /// Sessions over WebSocket upgrades too, on a second port (<doc:LongLinkOverWebSocket>): each
        /// LongLink frame one binary message. `nil` (the default): TCP only.
        public var webSocket: WebSocketConfiguration?

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
        /// Not admitted within ``Configuration/admissionTimeout`` (the client was told so).
        case admissionTimeout
        /// A frame not whole within ``Configuration/frameTimeout`` of its first byte (the client was told so).
        case frameTimeout
        /// ``LongLinkServer/shutDown(timeout:completion:)`` (the client was told the server is going away).
        case shuttingDown

        public var description: String {
            switch self {
            case .admissionTimeout: return "admission timeout"
            case .frameTimeout: return "frame timeout"
            case .shuttingDown: return "server shutting down"
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
        /// A connection from `address` was refused before it became a session
        /// (``LinkRefusal/serverFull(maxConnections:)``); it was told so and closed.
        case refused(SocketAddress?, LinkRefusal)
        /// `message` could not be encoded (`reason`: the codec's error) and was not sent to `sessions`:
        /// nothing is dropped without the app hearing of it.
        case sendFailed(Codec.Message, reason: String, to: [Session])
    }

    /// The codec given at creation.
    public let codec: Codec
    /// The configuration given at creation.
    public let configuration: Configuration
    private let events: EventSink<Event>
    private let listener: TCPSocket
    private let listenerCallbacks = SocketCallbacks()
    /// The WebSocket port's listening socket (``Configuration/webSocket``); nil without one.
    let webSocketListener: TCPSocket?
    private let webSocketCallbacks = SocketCallbacks()
    private let sessionTable = LockedValue<[Int: Session]>([:])
    /// Each event loop's ``IdleList`` of this server's sessions, made on the loop's first session.
    private let idleLists = LockedValue<[ObjectIdentifier: IdleList]>([:])
    private let sessionIDs = Atomic(0)
    /// ``heartbeatsAnswered``.
    let heartbeatCount = Atomic(0)
    /// Set by ``shutDown(timeout:completion:)``: called once the last session has closed.
    private let shutdownWaiter = LockedValue<(@Sendable () -> Void)?>(nil)

    /// Creates a server; it listens once ``start()`` is called.
    ///
    /// - Parameters:
    ///   - codec: frames every session's messages and answers heartbeats (``LinkCodec``).
    ///   - configuration: the port, limits, timeouts and TLS settings.
    ///   - group: the loops connections are spread over.
    ///   - eventQueue: where `onEvent` runs; `nil` runs it on each connection's loop thread.
    ///   - onEvent: receives every session's events, each session's in order.
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
        if configuration.webSocket != nil {
            // On the TCP listener's loop, so stop() closes the sessions after both listening sockets.
            let webSocketListener = TCPSocket(
                delegate: webSocketCallbacks, delegateQueue: nil, group: group, eventLoop: listener.eventLoop)
            webSocketListener.writeHighWatermark = configuration.maxQueuedBytesPerSession
            self.webSocketListener = webSocketListener
        } else {
            webSocketListener = nil
        }
        listenerCallbacks.didAccept = { [weak self] newSocket in self?.accepted(newSocket) }
        webSocketCallbacks.didAccept = { [weak self] newSocket in self?.upgrade(newSocket) }
    }

    /// A new connection (its WebSocket open when `webSocket` is given) becomes a session, or is refused.
    func accepted(_ socket: TCPSocket, webSocket: LinkWebSocketChannel? = nil) {
        let limit = configuration.maxConnections
        guard sessionTable.withLock({ $0.count }) < limit else {
            refuse(socket, webSocket, .serverFull(maxConnections: limit))
            return
        }
        let id = sessionIDs.add(1, ordering: .relaxed).newValue
        let session = Session(id: id, socket: socket, webSocket: webSocket, server: self)
        sessionTable.withLock { $0[id] = session }
        socket.eventLoop.execute { session.start() }
    }

    /// The ``IdleList`` of `loop`'s sessions (any thread).
    func idleList(for loop: EventLoop) -> IdleList {
        idleLists.withLock { lists in
            if let list = lists[ObjectIdentifier(loop)] { return list }
            let list = IdleList(loop: loop, timeout: configuration.idleTimeout.nanosecondsValue)
            lists[ObjectIdentifier(loop)] = list
            return list
        }
    }

    /// Tells a connection that will not become a session why, and closes it once that is written.
    private func refuse(_ socket: TCPSocket, _ webSocket: LinkWebSocketChannel?, _ refusal: LinkRefusal) {
        let farewell = codec.farewell(refusal, version: nil).flatMap { encode($0, orReport: []) }
        if let webSocket {
            // TLS, if any, started before the upgrade. The Close frame, then TCP at once, as over TCP.
            if let farewell { webSocket.send(farewell, tag: 0) }
            webSocket.close(code: refusal.webSocketCloseCode)
        } else {
            if let tls = configuration.tls { socket.startTLS(tls) }
            if let farewell { socket.write(farewell, withTimeout: -1, tag: 0) }
        }
        socket.disconnectAfterWriting()
        emit(.refused(socket.connectedAddress, refusal))
    }

    /// Starts listening.
    /// - Throws: `SocketError` from `bind`/`listen` (`EADDRINUSE`, for example) or name resolution.
    public func start() throws(SocketError) {
        listener.isReusePortEnabled = configuration.isReusePortEnabled
        try listener.accept(onInterface: configuration.host, port: configuration.port, backlog: configuration.backlog)
        guard let webSocketListener, let webSocket = configuration.webSocket else { return }
        webSocketListener.isReusePortEnabled = configuration.isReusePortEnabled
        do {
            try webSocketListener.accept(onInterface: configuration.host, port: webSocket.port, backlog: configuration.backlog)
        } catch {
            listener.disconnect()
            throw error
        }
    }

    /// The port listened on (the actual one when configured with 0), or 0 before ``start()``.
    public var port: UInt16 { listener.localPort }

    /// The address listened on, or `nil` before ``start()``.
    public var localAddress: SocketAddress? { listener.localAddress }

    /// Events handed to the event queue whose `onEvent` has not returned yet: the depth of that queue
    /// in events (a relaxed atomic read, from any thread; 0 when events run on the loops).
    public var pendingEvents: Int { events.pending.value.load(ordering: .relaxed) }

    /// Heartbeats answered so far, over every session (each acknowledgement sent or held for
    /// ``Session/releaseHeartbeatAcknowledgements()``); a relaxed atomic read, from any thread.
    public var heartbeatsAnswered: Int { heartbeatCount.load(ordering: .relaxed) }

    /// The sessions open now.
    public var sessions: [Session] { sessionTable.withLock { Array($0.values) }.sorted { $0.id < $1.id } }

    /// Sends `message` to every open session. Encodes once.
    public func broadcast(_ message: Codec.Message) {
        send(message, to: sessions)
    }

    /// Sends `message` to each of `sessions`, encoding it once. A message that cannot be encoded is
    /// sent to none of them and reported (``Event/sendFailed(_:reason:to:)``).
    public func send(_ message: Codec.Message, to sessions: some Sequence<Session>) {
        let data: Data
        do {
            data = try codec.encode(message)
        } catch {
            emit(.sendFailed(message, reason: describe(encodingError: error), to: Array(sessions)))
            return
        }
        for session in sessions { session.write(data) }
    }

    /// `message`'s wire bytes; nil, with the failure reported for `sessions`, when it cannot be encoded.
    func encode(_ message: Codec.Message, orReport sessions: [Session]) -> Data? {
        do {
            return try codec.encode(message)
        } catch {
            emit(.sendFailed(message, reason: describe(encodingError: error), to: sessions))
            return nil
        }
    }

    private func describe(encodingError error: any Error) -> String { "cannot encode: \(error)" }

    /// Stops accepting connections; the sessions open go on. (``shutDown(timeout:completion:)`` and
    /// ``stop()`` do it too.)
    public func stopAccepting() {
        listener.disconnect()
        webSocketListener?.disconnect()
    }

    /// Shuts down gracefully: stops accepting, tells every session the server is going away (the
    /// codec's ``LinkCodec/farewell(_:version:)`` for ``LinkRefusal/shuttingDown``, after whatever was
    /// sent to it before), closes each once that is written (``CloseReason/shuttingDown``), and calls
    /// `completion` with the number of sessions told, on the event queue after their ``Event/closed(_:_:)``
    /// events, once every one has closed, or once `timeout` has passed (the sessions still open, whose
    /// clients read too slowly to take their last bytes, are then closed at once). Call it once.
    public func shutDown(timeout: Duration = .seconds(5), completion: @escaping @Sendable (Int) -> Void) {
        listener.disconnect()
        webSocketListener?.disconnect()
        listener.eventLoop.execute { [self] in
            let told = sessions
            let done = LockedValue(false)
            let finishOnce: @Sendable () -> Void = { [self] in
                guard
                    done.withLock({
                        let first = !$0; $0 = true; return first
                    })
                else { return }
                afterEvents { completion(told.count) }
            }
            shutdownWaiter.withLock { $0 = finishOnce }
            for session in told { session.refuse(.shuttingDown, reason: .shuttingDown) }
            listener.eventLoop.scheduleTask(in: timeout) { [self] in
                for session in sessions { session.closeNow() }
                if sessions.isEmpty { finishOnce() }
            }
            if sessionTable.withLock({ $0.isEmpty }) { finishOnce() }
        }
    }

    /// Stops listening and closes every session (reason ``CloseReason/byServer``).
    public func stop() {
        listener.disconnect()
        webSocketListener?.disconnect()
        // The sessions close on the listener's loop, after the listening socket (its tasks run in
        // order): closed first from another loop, a session's client could reconnect at once and be
        // accepted by the listener that was still open.
        listener.eventLoop.execute { [self] in
            for session in sessions { session.close() }
        }
    }

    /// The library's log of this server (`LoggingSystem`'s handler for `LongLink.LongLinkServer`:
    /// silent unless the app bootstrapped one): sessions opened and closed with their reason and
    /// connections refused at `debug`, messages that could not be encoded at `warning`, each message
    /// received at `trace`.
    public let logger = Logger(label: "LongLink.LongLinkServer")

    func emit(_ event: Event) {
        switch event {
        case .opened(let session): logger.debug("session \(session) opened")
        case .received(let message, let session): logger.trace("session \(session) received \(message)")
        case .closed(let session, let reason): logger.debug("session \(session) closed (\(reason))")
        case .refused(let address, let refusal): logger.debug("refused \(address?.description ?? "?") (\(refusal))")
        case .sendFailed(_, let reason, let sessions):
            logger.warning("a message for \(sessions.count) sessions could not be encoded: \(reason)")
        }
        events.emit(event)
    }

    /// Runs `work` on the event queue after the events emitted before it.
    func afterEvents(_ work: @escaping @Sendable () -> Void) { events.perform(work) }

    /// Forgets `session`; true when no session is left.
    func remove(_ session: Session) -> Bool {
        sessionTable.withLock { table in
            table.removeValue(forKey: session.id)
            return table.isEmpty
        }
    }

    /// The last session has closed (its ``Event/closed(_:_:)`` emitted): a shutdown waiting for it ends.
    func lastSessionClosed() {
        shutdownWaiter.withLock { $0 }?()
    }
}
