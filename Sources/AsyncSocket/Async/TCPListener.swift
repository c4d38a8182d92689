import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening socket whose accepted connections arrive as an `AsyncSequence` of ``TCPConnection``s.
///
/// ```swift
/// let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
/// print("listening on", listener.port)
/// for try await connection in listener {
///     Task { try await serve(connection) }
/// }
/// ```
///
/// Connections are accepted as they arrive, whether or not a task is iterating. Up to
/// ``Options/maxPendingConnections`` of them wait in the listener for the iteration; beyond that bound, newly
/// accepted connections are closed at once (the peer sees its connection accepted, then closed). A
/// ``TCPSocket`` cannot stop accepting while it listens, so this bound, not the kernel's backlog, is
/// what limits the connections waiting.
///
/// Iteration ends (`next()` returns `nil`) when the listener is closed, and, for the iterating task
/// only, when that task is cancelled: cancellation does not close the listener, and another iteration
/// can carry on. When listening fails, `next()` throws that error once, then returns `nil`. Several tasks
/// may iterate at once; each connection goes to one of them.
///
/// Threading: every member may be used from any task. Accepted connections are set up on their event
/// loop's thread.
public final class TCPListener: AsyncSequence, Sendable {
    /// The elements: accepted connections, already connected.
    public typealias Element = TCPConnection

    let socket: TCPSocket
    let bridge: AsyncListenerBridge

    /// The address listened on (the first one when listening on several, for example IPv4 and IPv6 for
    /// `"localhost"`); for port 0, with the port the kernel chose. Stays readable after ``close()``.
    public let localAddress: SocketAddress?

    /// The port listened on (the one the kernel chose for port 0); 0 for a Unix-domain listener.
    public var port: UInt16 { localAddress?.port ?? 0 }

    /// The default bound on accepted connections waiting for the iteration: 128.
    public static let defaultMaxPendingConnections = 128

    init(socket: TCPSocket, bridge: AsyncListenerBridge, localAddress: SocketAddress?, options: Options) {
        self.options = options
        self.socket = socket
        self.bridge = bridge
        self.localAddress = localAddress
    }

    deinit {
        bridge.removeSocketFile()
        socket.disconnect()
    }

    /// How a ``TCPListener`` listens, and the options of the connections it accepts.
    ///
    /// ```swift
    /// var options = TCPListener.Options()
    /// options.isReusePortEnabled = true                  // one listener per worker process
    /// options.connectionOptions.keepAlive = .init(idle: .seconds(60), interval: .seconds(10), count: 5)
    /// let listener = try await TCPListener.bind(host: "0.0.0.0", port: 7000, options: options)
    /// ```
    public struct Options: Sendable, Equatable {
        /// The `listen(2)` backlog: connections the kernel completes before they are accepted. The
        /// kernel caps it (`net.core.somaxconn`). Default 1024.
        public var backlog = 1024

        /// Accepted connections that may wait for the iteration (at least 1); more are closed at once.
        /// Default ``TCPListener/defaultMaxPendingConnections``.
        public var maxPendingConnections = TCPListener.defaultMaxPendingConnections

        /// Whether the listening sockets set `SO_REUSEPORT` (socket(7)), so several listeners (in this
        /// process or others, each with this option) can bind the same address and port, and the
        /// kernel spreads incoming connections over them. Default false: a second bind of a port in use
        /// throws ``SocketError/addressInUse(operation:errno:)``. (`SO_REUSEADDR` is always set on TCP
        /// listeners, so a restarted server can bind its port while old connections are in TIME_WAIT.)
        /// Ignored for Unix-domain listeners.
        public var isReusePortEnabled = false

        /// Whether to listen on IPv4 addresses when the host has both kinds (`nil`, `"localhost"`, an
        /// interface name). Default true.
        public var isIPv4Enabled = true

        /// Whether to listen on IPv6 addresses when the host has both kinds. Default true.
        public var isIPv6Enabled = true

        /// The options every accepted connection gets: no-delay, keep-alive, buffer sizes (the receive
        /// buffer is set on the listening socket too, before `listen(2)`, so window scaling accounts for
        /// it), linger and ``TCPConnection/Options/allowRemoteHalfClosure``. Their connect-only options
        /// (address families, interface, Happy Eyeballs) do not apply.
        public var connectionOptions = TCPConnection.Options()

        /// TLS for every accepted connection (a server's ``TLSConfiguration``, with its certificate
        /// chain and key): the handshake starts at accept, and the connection is handed to the
        /// iteration at once; its reads and writes wait for the handshake, and a failed one ends the
        /// connection, so they throw its ``SocketError/tls(_:)``. ``TCPConnection/waitUntilSecure()``
        /// awaits the outcome. The settings are loaded once (at `bind`: a bad file throws there).
        /// `nil` (the default): plaintext.
        public var tls: TLSConfiguration?

        /// Options with the values given, each parameter defaulting to the property's default: backlog
        /// 1024, 128 pending connections, no `SO_REUSEPORT`, IPv4 and IPv6, and the default
        /// ``TCPConnection/Options`` for accepted connections. `Options()` is the defaults.
        public init(
            backlog: Int = 1024,
            maxPendingConnections: Int = TCPListener.defaultMaxPendingConnections,
            isReusePortEnabled: Bool = false,
            isIPv4Enabled: Bool = true,
            isIPv6Enabled: Bool = true,
            connectionOptions: TCPConnection.Options = TCPConnection.Options()
        ) {
            self.backlog = backlog
            self.maxPendingConnections = maxPendingConnections
            self.isReusePortEnabled = isReusePortEnabled
            self.isIPv4Enabled = isIPv4Enabled
            self.isIPv6Enabled = isIPv6Enabled
            self.connectionOptions = connectionOptions
        }

        /// The options the deprecated `bind` parameters gave.
        init(_ backlog: Int32, _ maxPendingConnections: Int, _ allowRemoteHalfClosure: Bool) {
            self.init(
                backlog: Int(backlog), maxPendingConnections: maxPendingConnections,
                connectionOptions: TCPConnection.Options(allowRemoteHalfClosure: allowRemoteHalfClosure))
        }

        /// Sets these options on the listening `socket`; its accepted sockets inherit them.
        func apply(to socket: TCPSocket) {
            connectionOptions.apply(to: socket)
            socket.isReusePortEnabled = isReusePortEnabled
            socket.isIPv4Enabled = isIPv4Enabled
            socket.isIPv6Enabled = isIPv6Enabled
        }
    }

    /// Listens on `host` and `port` (``TCPSocket/accept(onInterface:port:backlog:)``).
    ///
    /// - Parameters:
    ///   - host: a numeric address (`"127.0.0.1"`, `"::1"`), `"localhost"` (IPv4 and IPv6 loopback), an
    ///     interface name (`"lo"`, `"eth0"`) or a host name; `nil` listens on every interface, IPv4 and IPv6.
    ///   - port: 0 lets the kernel pick a free port; read it from ``port``.
    ///   - options: backlog, pending connections, `SO_REUSEPORT`, address families and the accepted
    ///     connections' options; see ``Options``.
    ///   - group: the event loops the listener and its connections run on (spread over the group's loops).
    /// - Returns: once the listener is listening: connects to it succeed from then on.
    /// - Throws: ``SocketError/addressInUse(operation:errno:)`` when the port is taken,
    ///   ``SocketError/addressNotAvailable(operation:errno:)`` for an address that is not this host's,
    ///   ``SocketError/posix(operation:errno:)`` for other system errors (`EACCES` for a privileged port),
    ///   ``SocketError/badParam(_:)`` for an unknown interface or a ``Options/maxPendingConnections``
    ///   below 1, ``SocketError/badConfig(_:)`` when both address families are disabled.
    public static func bind(
        host: String?,
        port: UInt16,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> TCPListener {
        try await start(options, group, socketFile: nil) { socket throws(SocketError) in
            try socket.accept(onInterface: host, port: port, backlog: Int32(clamping: options.backlog))
        }
    }

    /// Listens on a Unix-domain stream socket at the file URL `url` (``TCPSocket/accept(onUrl:backlog:)``):
    /// a stale socket file there is replaced; ``close()`` removes the socket file. Other parameters and
    /// errors as ``bind(host:port:options:group:)``, plus ``SocketError/badParam(_:)`` for a URL that is
    /// not a usable socket path, and ``SocketError/addressInUse(operation:errno:)`` when another socket
    /// listens at the path or a file that is not a socket is there.
    public static func bind(
        url: URL,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> TCPListener {
        try await start(options, group, socketFile: url.path) { socket throws(SocketError) in
            try socket.accept(onUrl: url, backlog: Int32(clamping: options.backlog))
        }
    }

    /// Listens on `host` and `port`, with the options as separate parameters.
    @available(*, deprecated, message: "use bind(host:port:options:group:)")
    public static func bind(
        host: String?,
        port: UInt16,
        backlog: Int32 = 1024,
        maxPendingConnections: Int = TCPListener.defaultMaxPendingConnections,
        allowRemoteHalfClosure: Bool = false,
        group: EventLoopGroup = .shared
    ) async throws -> TCPListener {
        try await bind(
            host: host, port: port,
            options: Options(backlog, maxPendingConnections, allowRemoteHalfClosure), group: group)
    }

    /// Listens on the Unix-domain socket at `url`, with the options as separate parameters.
    @available(*, deprecated, message: "use bind(url:options:group:)")
    public static func bind(
        url: URL,
        backlog: Int32 = 1024,
        maxPendingConnections: Int = TCPListener.defaultMaxPendingConnections,
        allowRemoteHalfClosure: Bool = false,
        group: EventLoopGroup = .shared
    ) async throws -> TCPListener {
        try await bind(url: url, options: Options(backlog, maxPendingConnections, allowRemoteHalfClosure), group: group)
    }

    private static func start(
        _ options: Options,
        _ group: EventLoopGroup,
        socketFile: String?,
        _ listen: (TCPSocket) throws(SocketError) -> Void
    ) async throws -> TCPListener {
        let maxPending = options.maxPendingConnections
        guard maxPending >= 1 else { throw SocketError.badParam("maxPendingConnections must be at least 1") }
        let socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group)
        options.apply(to: socket)
        if let tls = options.tls {
            // Loads the certificates now, so that bad settings fail the bind, not every connection.
            do throws(TLSError) {
                guard tls.role == .server else { throw .badConfiguration("a listener's TLS settings must have the server role") }
                _ = try TLSContext.shared(for: tls)
            } catch {
                throw SocketError.tls(error)
            }
        }
        let bridge = AsyncListenerBridge(socket: socket, maxPending: maxPending, socketFile: socketFile, tls: options.tls)
        socket.delegate = bridge
        try listen(socket)
        let listener = TCPListener(socket: socket, bridge: bridge, localAddress: socket.localAddress, options: options)
        // The socket registers its listening descriptors in a task on its loop; once a task queued
        // after it has run, the listener is listening, or has failed.
        await withCheckedContinuation { continuation in socket.eventLoop.execute { continuation.resume() } }
        if let failure = bridge.failure { throw failure }
        return listener
    }

    /// The listener's options, as given to `bind`.
    public let options: Options

    /// Stops listening and returns once the listening socket is closed (connects are refused from
    /// then on). Connections accepted but not yet handed to the iteration are closed; iterations end.
    /// Connections already handed out are not affected. Calling it again returns at once.
    public func close() async {
        await bridge.close()
    }

    /// Makes an iterator over the accepted connections. Iterators share the listener's queue: each
    /// connection goes to one `next()` call.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(bridge: bridge)
    }

    /// Hands out accepted connections, oldest first.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let bridge: AsyncListenerBridge

        /// The next accepted connection, waiting for one to arrive. Returns `nil` once the listener is
        /// closed, or when the calling task is cancelled (the listener stays open).
        ///
        /// - Throws: the ``SocketError`` that ended listening, once.
        public mutating func next() async throws -> TCPConnection? {
            try await bridge.next()
        }
    }
}

/// The delegate of a ``TCPListener``'s socket (delegate queue `nil`: callbacks inline on the loop):
/// wraps each accepted socket in a ``TCPConnection`` before the socket starts reading, and queues it
/// for the iteration.
final class AsyncListenerBridge: TCPSocketDelegate, Sendable {
    /// The listener's own locked fields, beside the accepted connections, the end and the close.
    struct Fields {
        var socketFileRemoved = false
    }

    let socket: TCPSocket
    let maxPending: Int
    let socketFile: String?
    let tls: TLSConfiguration?
    /// The accepted connections waiting for `next()` and the `next()` calls waiting for them; they
    /// finish when the socket ends (with the error that ended listening, unless ``close()`` did).
    private let lock = AsyncBridgeLock<TCPConnection, Fields>(Fields())

    init(socket: TCPSocket, maxPending: Int, socketFile: String?, tls: TLSConfiguration?) {
        self.socket = socket
        self.maxPending = maxPending
        self.socketFile = socketFile
        self.tls = tls
    }

    /// Accepted connections waiting for the iteration (for tests).
    var pendingConnections: Int { lock.withLock { $0.bufferedCount } }

    /// `next()` calls waiting for a connection (for tests).
    var waitingIterations: Int { lock.withLock { $0.waitingCount } }

    /// The error listening ended with, if it did end with one and no `next()` has thrown it yet.
    var failure: SocketError? {
        lock.withLock { state in
            if case .finished(_, let failure) = state.elements { failure } else { nil }
        }
    }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        // Inline on the listener's loop, before the new socket starts reading: no callback of the new
        // socket can reach the listener's bridge.
        let bridge = AsyncConnectionBridge(socket: newSocket)
        newSocket.setDelegate(bridge, delegateQueue: nil)
        let connection = TCPConnection(
            socket: newSocket, bridge: bridge,
            localAddress: newSocket.localAddress, remoteAddress: newSocket.connectedAddress)
        if let tls { newSocket.startTLS(tls) }
        lock.locked { state, effects in
            // Past the bound, or once listening has ended, the connection is closed at once.
            if state.offer(connection, bufferLimit: maxPending, &effects) == .refused {
                effects.append { newSocket.disconnect() }
            }
        }
    }

    func next() async throws -> TCPConnection? {
        try await lock.next().get()
    }

    func close() async {
        await lock.close(request: { _, _ in }, end: { socket.disconnect() })
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        removeSocketFile()
        lock.locked { state, effects in
            guard state.ended == nil else { return }
            state.ended = err ?? .connectionClosed
            // Every waiting iteration throws the error; with none waiting, the next one does.
            let unclaimed = state.finish(
                failure: state.closeRequested ? nil : err, failureToEveryWaiter: true, keepingBuffered: false, &effects)
            effects.append {
                var unclaimed = unclaimed
                while let connection = unclaimed.popFirst() { connection.socket.disconnect() }
            }
            state.resumeCloseWaiters(&effects)
        }
    }

    /// Removes the Unix-domain socket file this listener created, once.
    func removeSocketFile() {
        guard let socketFile else { return }
        let remove = lock.withLock { state -> Bool in
            defer { state.socketFileRemoved = true }
            return !state.socketFileRemoved
        }
        if remove { unlink(socketFile) }
    }
}
