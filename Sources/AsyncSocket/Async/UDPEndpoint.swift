import Foundation

/// A UDP socket with an async/await API: ``send(_:to:)`` as an `async` function and the received
/// datagrams as an `AsyncSequence` (``datagrams``), with backpressure. The async counterpart of
/// ``UDPSocket``, as ``TCPConnection`` is of ``TCPSocket``.
///
/// Named for what UDP gives: not a connection (``TCPConnection``) nor a listener (``TCPListener``) but
/// an endpoint, one address that sends datagrams to and receives them from any other (SwiftNIO's
/// `DatagramChannel`; `DatagramChannel` is taken here by ``UDPSocket``'s descriptor type).
///
/// ```swift
/// let server = try await UDPEndpoint.bind(host: "127.0.0.1", port: 0)
/// Task {
///     for try await datagram in server.datagrams {                     // an echo server
///         try await server.send(datagram.data, to: datagram.sender)
///     }
/// }
/// let client = try await UDPEndpoint.connect(to: server.localAddress!)  // a connected endpoint
/// try await client.send(Data("ping".utf8))
/// let reply = try await client.receive()                               // "ping", from the server
/// await client.close()
/// ```
///
/// Receiving starts when ``bind(host:port:options:group:)`` or ``connect(toHost:port:options:group:)``
/// returns, whether or not a task iterates: up to ``Options/maxBufferedDatagrams`` datagrams (default
/// 128) wait in the endpoint. When that many wait, it stops reading from the kernel, whose receive
/// buffer (``Options/receiveBufferSize``) then holds what comes and drops what does not fit: a consumer
/// that falls behind loses datagrams (as UDP may anyway), the process never grows. Reading resumes once
/// the iteration has taken the buffer down to half the limit.
///
/// Datagrams longer than ``Options/maxReceiveSize`` are discarded, never delivered cut short, and
/// counted in ``skippedReceives``, as are receive errors left by ICMP messages; neither ends the
/// iteration.
///
/// Threading: every method may be called from any task, also concurrently. The endpoint owns a
/// ``UDPSocket`` whose delegate is internal and whose callbacks run inline on the socket's event-loop
/// thread; they resume the waiting calls there. Sends go out in the order they were called.
///
/// Errors: everything throws ``SocketError`` (``connect(toHost:port:options:group:)`` also
/// `CancellationError`). A failed send fails alone; the endpoint stays usable. After ``close()`` every
/// call throws ``SocketError/connectionClosed``. Keep a reference for as long as you use the endpoint;
/// when the last one goes, it closes.
public final class UDPEndpoint: Sendable {
    let socket: UDPSocket
    let bridge: UDPEndpointBridge

    /// This endpoint's address, as it was when it was bound or connected (it stays readable after
    /// ``close()``): for a bind with a `nil` host, the IPv4 wildcard address (`0.0.0.0`) with the port,
    /// which the IPv6 descriptor shares. `nil` only if the system could not report it.
    public let localAddress: SocketAddress?

    /// The peer of a connected endpoint (``connect(toHost:port:options:group:)``): the only address it
    /// sends to and receives from. `nil` for a bound endpoint.
    public let remoteAddress: SocketAddress?

    /// The endpoint's options, as given.
    public let options: Options

    init(socket: UDPSocket, bridge: UDPEndpointBridge, remoteAddress: SocketAddress?, options: Options) {
        self.socket = socket
        self.bridge = bridge
        self.localAddress = socket.localAddress
        self.remoteAddress = remoteAddress
        self.options = options
    }

    deinit {
        socket.close()
    }

    // MARK: Opening

    /// Binds a UDP endpoint to `host` and `port` and starts receiving.
    ///
    /// - Parameters:
    ///   - host: a local address (`"127.0.0.1"`, `"::1"`), an interface name (`"lo"`, `"eth0"`), or
    ///     `"localhost"` / `"loopback"`; `nil` binds every interface, an IPv4 and an IPv6 descriptor
    ///     (as ``Options/isIPv4Enabled`` and ``Options/isIPv6Enabled`` allow) sharing the port.
    ///   - port: host byte order; 0 lets the kernel pick a free port (read it from ``localAddress``).
    ///   - options: see ``Options``.
    ///   - group: the event loops to take the endpoint's loop from.
    /// - Returns: once bound and receiving: datagrams sent to it from then on are kept.
    /// - Throws: ``SocketError/addressInUse(operation:errno:)`` when the port is taken (unless every
    ///   endpoint on it sets ``Options/isReusePortEnabled``), ``SocketError/addressNotAvailable(operation:errno:)``
    ///   for an address that is not this host's, ``SocketError/badParam(_:)`` for an unknown interface or
    ///   options out of range, ``SocketError/badConfig(_:)`` when no enabled family fits `host`,
    ///   ``SocketError/posix(operation:errno:)`` for other system errors.
    public static func bind(
        host: String?,
        port: UInt16,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws(SocketError) -> UDPEndpoint {
        let (socket, bridge) = try make(options, group)
        do {
            try socket.bind(toPort: port, interface: host)
            try options.applyBufferSizes(to: socket)
            try bridge.startReceiving()
        } catch {
            socket.close()
            throw error
        }
        return UDPEndpoint(socket: socket, bridge: bridge, remoteAddress: nil, options: options)
    }

    /// Opens a connected endpoint (UDP's `connect(2)`, which sends nothing): it sends only to `host`
    /// on `port` (with ``send(_:)``), receives only from it, and learns of ICMP errors for it. Its local
    /// port is picked by the kernel. The name resolves on a global dispatch queue, never on an event
    /// loop; among its addresses the first of an enabled family is used.
    ///
    /// - Parameters:
    ///   - host: a name or a numeric IPv4/IPv6 address.
    ///   - port: host byte order.
    ///   - options: see ``Options``.
    ///   - group: the event loops to take the endpoint's loop from.
    /// - Throws: ``SocketError/hostLookupFailed(host:code:)``, ``SocketError/badConfig(_:)`` when no
    ///   address of an enabled family is left, ``SocketError/unreachable(operation:errno:)`` and other
    ///   errors of `connect(2)`, ``SocketError/badParam(_:)`` for options out of range;
    ///   `CancellationError` when the task is cancelled, which abandons the connect.
    public static func connect(
        toHost host: String,
        port: UInt16,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> UDPEndpoint {
        try await connect(options, group) { socket throws(SocketError) in try socket.connect(toHost: host, onPort: port) }
    }

    /// Opens an endpoint connected to `address`, an IPv4 or IPv6 socket address, as
    /// ``connect(toHost:port:options:group:)`` without a name to resolve.
    public static func connect(
        to address: SocketAddress,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> UDPEndpoint {
        try await connect(options, group) { socket throws(SocketError) in try socket.connect(to: address) }
    }

    private static func connect(
        _ options: Options,
        _ group: EventLoopGroup,
        _ start: (UDPSocket) throws(SocketError) -> Void
    ) async throws -> UDPEndpoint {
        let (socket, bridge) = try make(options, group)
        let peer: SocketAddress
        do {
            peer = try await bridge.connect(start)
        } catch {
            socket.close()  // a failed connect may have left a descriptor open
            throw error
        }
        do {
            try options.applyBufferSizes(to: socket)
            try bridge.startReceiving()
        } catch {
            socket.close()
            throw error
        }
        return UDPEndpoint(socket: socket, bridge: bridge, remoteAddress: peer, options: options)
    }

    /// A socket with `options` and its bridge as delegate (callbacks inline on the loop).
    private static func make(_ options: Options, _ group: EventLoopGroup) throws(SocketError) -> (UDPSocket, UDPEndpointBridge) {
        try options.validate()
        let socket = UDPSocket(delegate: nil, delegateQueue: nil, group: group)
        try options.apply(to: socket)
        let bridge = UDPEndpointBridge(socket: socket, limit: options.maxBufferedDatagrams)
        socket.setDelegate(bridge, delegateQueue: nil)
        return (socket, bridge)
    }

    // MARK: Sending

    /// Sends `data` as one datagram to `address`, after the sends called before it, and returns once
    /// the kernel has taken it (UDP gives no delivery receipt: a datagram taken may still be lost).
    /// Empty data sends an empty datagram. Not cancellable: a send is prompt, it waits only for room in
    /// the kernel's send buffer.
    ///
    /// - Throws: the datagram's own error, after which the endpoint stays usable:
    ///   ``SocketError/datagramTooLarge(size:maxSendSize:)`` over 65,535 bytes,
    ///   ``SocketError/messageTooLarge(operation:errno:)`` (`EMSGSIZE`, over 65,507 bytes of IPv4
    ///   payload), ``SocketError/unreachable(operation:errno:)``, ``SocketError/posix(operation:errno:)``
    ///   with `EACCES` for a broadcast address without ``Options/isBroadcastEnabled``,
    ///   ``SocketError/badConfig(_:)`` on a connected endpoint or for a disabled family;
    ///   ``SocketError/connectionClosed`` after (or during) ``close()``.
    public func send(_ data: Data, to address: SocketAddress) async throws(SocketError) {
        try await bridge.send(data, to: address)
    }

    /// Sends `data` as one datagram to the peer of a connected endpoint, as ``send(_:to:)``.
    ///
    /// - Throws: ``SocketError/notConnected`` on an endpoint made by ``bind(host:port:options:group:)``;
    ///   ``SocketError/connectionRefused(operation:errno:)`` when an ICMP port unreachable for an
    ///   earlier datagram reached the send first (it usually reaches receiving instead: see
    ///   ``skippedReceives``); otherwise as ``send(_:to:)``.
    public func send(_ data: Data) async throws(SocketError) {
        try await bridge.send(data, to: nil)
    }

    // MARK: Receiving

    /// The received datagrams, oldest first, each whole with its sender. Ends (returns `nil`) after
    /// ``close()``; a task's iteration also ends when the task is cancelled, leaving the endpoint open.
    /// Several iterations share the datagrams: each goes to one of them.
    ///
    /// ```swift
    /// for try await datagram in endpoint.datagrams {
    ///     print(datagram.sender, datagram.data.count)
    /// }
    /// ```
    public var datagrams: Datagrams { Datagrams(bridge: bridge) }

    /// The next received datagram, waiting for one to arrive: ``datagrams``' `next()` for code that
    /// takes one at a time (a request's reply).
    ///
    /// - Throws: ``SocketError/connectionClosed`` once the endpoint is closed, or the error that closed
    ///   it; `CancellationError` when the task is cancelled (no datagram is taken).
    public func receive() async throws -> Datagram {
        if let datagram = try await bridge.next() { return datagram }
        try Task.checkCancellation()
        throw SocketError.connectionClosed
    }

    /// What receiving has skipped so far: datagrams longer than ``Options/maxReceiveSize`` and receive
    /// errors (see ``SkippedReceives``).
    public var skippedReceives: SkippedReceives { bridge.skipped }

    // MARK: Closing

    /// Closes the endpoint now and returns once its socket is closed. Iterations of ``datagrams`` end
    /// (`next()` returns `nil`), datagrams not yet taken are discarded, sends the kernel has not taken
    /// throw ``SocketError/connectionClosed``, and so does every later call. Calling it again returns at
    /// once. Not cancellable; it is prompt.
    public func close() async {
        await bridge.close()
    }
}
