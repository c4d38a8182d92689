import Foundation

/// One TCP (or Unix-domain stream) connection with an async/await API: connect, reads of each kind,
/// writes, half-close and close as `async` functions, for code that prefers structured concurrency to a
/// ``TCPSocketDelegate``. The same type serves both ends: ``connect(toHost:port:timeout:tls:options:group:)``
/// on the client side, ``TCPListener`` on the server side.
///
/// ```swift
/// let connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: 7000, timeout: .seconds(5))
/// try await connection.write(Data("PING\r\n".utf8))
/// let reply = try await connection.read(upTo: TCPSocket.crlfData, maxLength: 512, timeout: .seconds(10))
/// await connection.close()
/// ```
///
/// Options: ``Options`` sets every socket option a ``TCPSocket`` has that applies to a connection, in
/// Swift's units (`Int` byte counts, `Duration` times); ``isNoDelayEnabled``, ``keepAlive``,
/// ``sendBufferSize``, ``receiveBufferSize`` and ``linger`` can be changed on the established connection.
///
/// Threading: every method may be called from any task, also concurrently. The connection owns a
/// ``TCPSocket`` whose delegate is internal and whose callbacks run inline on the socket's event-loop
/// thread; they resume the waiting calls there. Nothing of the connection runs on the caller's actor.
///
/// Reads are satisfied in the order they were called, and writes are sent in the order they were
/// called: concurrent reads (or writes) from several tasks queue behind each other. One reader task and
/// one writer task at a time is the usual pattern.
///
/// Errors: every method throws ``SocketError``, or `CancellationError` when its task is cancelled. When
/// the connection ends, every pending and later call throws the error that ended it:
/// ``SocketError/closedByPeer`` for a clean close by the peer, ``SocketError/connectionReset(operation:errno:)``
/// for a reset (``SocketError/brokenPipe(operation:errno:)`` when a write saw it first,
/// ``SocketError/connectionTimedOut(operation:errno:)`` when keep-alive probes went unanswered, or
/// another case with an ``SocketError/errno``), ``SocketError/readTimeout(tag:)`` or ``SocketError/writeTimeout(tag:)`` for a timeout,
/// ``SocketError/connectionClosed`` after ``close()``. One exception keeps received data from being
/// lost: bytes that had arrived before the connection ended (other than by ``close()``) stay readable,
/// so a read returns them as long as they satisfy it, and only then throws.
///
/// Cancellation: a read whose task is cancelled throws `CancellationError` at once and consumes no
/// bytes: every byte stays, in order, for the next read, and the connection stays usable. A write whose
/// task is cancelled throws `CancellationError` at once, but its bytes cannot be taken back: they stay
/// queued and are sent, in order, before any later write. A task that is already cancelled queues
/// nothing. See docs/ASYNC.md.
///
/// The connection owns its socket's delegate: mixing in the delegate style on the same socket is not
/// supported. Keep a reference for as long as you use the connection; when the last one goes, the
/// connection closes.
public final class TCPConnection: Sendable {
    let socket: TCPSocket
    let bridge: AsyncConnectionBridge

    /// This side's address, as it was when the connection was established (it stays readable after
    /// the connection ends). `nil` only if the system could not report it.
    public let localAddress: SocketAddress?

    /// The peer's address, as it was when the connection was established: the address actually
    /// connected to, or the address `accept(2)` reported. A Unix-domain address for Unix-domain
    /// connections (whose accepted side's peer is usually unnamed, so `nil`-pathed).
    public let remoteAddress: SocketAddress?

    init(socket: TCPSocket, bridge: AsyncConnectionBridge, localAddress: SocketAddress?, remoteAddress: SocketAddress?) {
        self.socket = socket
        self.bridge = bridge
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
    }

    deinit {
        socket.disconnect()
    }

    // MARK: Connecting

    /// Connects to `host` (a name or a numeric IPv4/IPv6 address) on `port`, trying every address the
    /// name resolves to (Happy Eyeballs, as ``TCPSocket/connect(toHost:onPort:viaInterface:withTimeout:)``).
    /// Name resolution never blocks an event loop.
    ///
    /// - Parameters:
    ///   - host: a host name (resolved without blocking a loop) or a numeric IPv4/IPv6 address.
    ///   - port: the TCP port, in host byte order.
    ///   - timeout: for the whole connect, name resolution included; `nil` waits as long as the system
    ///     does (until the kernel gives up: ``SocketError/connectionTimedOut(operation:errno:)``).
    ///   - tls: secure the connection with these settings before returning it (``startTLS(_:evaluatingTrust:)``,
    ///     whose time the `timeout` does not include: the settings' ``TLSConfiguration/handshakeTimeout``
    ///     bounds it); a `nil` ``TLSConfiguration/peerName`` becomes `host`. `nil` (the default): plaintext.
    ///   - options: how to connect (address families, local interface, Happy Eyeballs delay) and the
    ///     connection's socket options; see ``Options``.
    ///   - group: the event loops the connection runs on.
    /// - Throws: ``SocketError/connectTimeout``, ``SocketError/hostLookupFailed(host:code:)``,
    ///   ``SocketError/connectionRefused(operation:errno:)`` (nothing listens there),
    ///   ``SocketError/unreachable(operation:errno:)``, ``SocketError/connectionTimedOut(operation:errno:)``,
    ///   ``SocketError/addressNotAvailable(operation:errno:)``, ``SocketError/posix(operation:errno:)``
    ///   for other system errors, ``SocketError/badParam(_:)`` for an unknown ``Options/localInterface``,
    ///   ``SocketError/badConfig(_:)`` when no address of an enabled family is left; with `tls`, the
    ///   handshake's ``SocketError/tls(_:)``; `CancellationError` when the task is cancelled, which
    ///   abandons the connect (and closes a connection whose handshake it interrupts).
    public static func connect(
        toHost host: String,
        port: UInt16,
        timeout: Duration? = nil,
        tls: TLSConfiguration? = nil,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> TCPConnection {
        let connection = try await connect(options: options, group: group) { socket throws(SocketError) in
            try socket.connect(
                toHost: host, onPort: port, viaInterface: options.localInterface,
                withTimeout: asyncSeconds(timeout))
        }
        return try await connection.securedIfAsked(tls, peerName: host)
    }

    /// Connects to `address`, an IPv4, IPv6 or Unix-domain socket address. Parameters and errors as
    /// ``connect(toHost:port:timeout:tls:options:group:)``, without name resolution (a `nil`
    /// ``TLSConfiguration/peerName`` becomes the address's numeric host, checked against the
    /// certificate's IP addresses).
    public static func connect(
        to address: SocketAddress,
        timeout: Duration? = nil,
        tls: TLSConfiguration? = nil,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> TCPConnection {
        let connection = try await connect(options: options, group: group) { socket throws(SocketError) in
            try socket.connect(to: address, viaInterface: options.localInterface, withTimeout: asyncSeconds(timeout))
        }
        return try await connection.securedIfAsked(tls, peerName: address.host)
    }

    /// Connects to the Unix-domain stream socket at the file URL `url`
    /// (`URL(fileURLWithPath: "/tmp/app.sock")`). Parameters as
    /// ``connect(toHost:port:timeout:tls:options:group:)``; of the options, those that apply to a
    /// Unix-domain stream (buffer sizes, linger, half-close) are used.
    ///
    /// - Throws: ``SocketError/badParam(_:)`` for a URL that is not a file URL or whose path is too long
    ///   for a socket address; ``SocketError/connectionRefused(operation:errno:)`` when nothing listens
    ///   on the socket file; ``SocketError/posix(operation:errno:)`` with `ENOENT` when there is no such
    ///   file; ``SocketError/connectTimeout``; `CancellationError`.
    public static func connect(
        to url: URL,
        timeout: Duration? = nil,
        options: Options = Options(),
        group: EventLoopGroup = .shared
    ) async throws -> TCPConnection {
        try await connect(options: options, group: group) { socket throws(SocketError) in
            try socket.connect(toUrl: url, withTimeout: asyncSeconds(timeout))
        }
    }

    /// Connects to `host` on `port`, with the peer's FIN ending only the read direction when
    /// `allowRemoteHalfClosure` is true.
    @available(*, deprecated, message: "use connect(toHost:port:timeout:tls:options:group:) with Options.allowRemoteHalfClosure")
    public static func connect(
        toHost host: String,
        port: UInt16,
        timeout: Duration? = nil,
        allowRemoteHalfClosure: Bool,
        group: EventLoopGroup = .shared
    ) async throws -> TCPConnection {
        var options = Options()
        options.allowRemoteHalfClosure = allowRemoteHalfClosure
        return try await connect(toHost: host, port: port, timeout: timeout, options: options, group: group)
    }

    /// Connects to the Unix-domain stream socket at the file URL `url`: GCDAsyncSocket's spelling,
    /// which stays on ``TCPSocket/connect(toUrl:withTimeout:)``.
    @available(*, deprecated, renamed: "connect(to:timeout:options:group:)")
    public static func connect(
        toUrl url: URL,
        timeout: Duration? = nil,
        allowRemoteHalfClosure: Bool = false,
        group: EventLoopGroup = .shared
    ) async throws -> TCPConnection {
        var options = Options()
        options.allowRemoteHalfClosure = allowRemoteHalfClosure
        return try await connect(to: url, timeout: timeout, options: options, group: group)
    }

    private static func connect(
        options: Options,
        group: EventLoopGroup,
        _ start: (TCPSocket) throws(SocketError) -> Void
    ) async throws -> TCPConnection {
        let socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group)
        options.apply(to: socket)
        let bridge = AsyncConnectionBridge(socket: socket)
        socket.delegate = bridge
        let addresses = try await bridge.connect(start)
        return TCPConnection(socket: socket, bridge: bridge, localAddress: addresses.local, remoteAddress: addresses.remote)
    }

    // MARK: Reading

    /// Reads the bytes available now, or waits for the next ones to arrive: at least one byte and at
    /// most `maxLength`. Bytes beyond `maxLength` stay for the next read.
    ///
    /// - Parameters:
    ///   - maxLength: the most bytes to return; at least 1.
    ///   - timeout: counted from when this read becomes the current one (the reads called before it have
    ///     returned); `nil` means none. On expiry the connection closes and this read throws
    ///     ``SocketError/readTimeout(tag:)`` with the read's number on this connection (1 for the first
    ///     read called, 2 for the second, …), as a ``TCPSocket`` read timeout does. For a deadline that
    ///     keeps the connection usable, cancel the read instead.
    /// - Returns: the bytes, never empty.
    /// - Throws: ``SocketError/badParam(_:)`` for a `maxLength` below 1; the connection's end
    ///   (``SocketError/closedByPeer`` at the end of the peer's data); `CancellationError`.
    public func read(maxLength: Int = .max, timeout: Duration? = nil) async throws -> Data {
        guard maxLength >= 1 else { throw SocketError.badParam("a read needs a maxLength of at least 1") }
        return try await bridge.read(.available(maxLength: maxLength), timeout: timeout)
    }

    /// Reads exactly `length` bytes, however they arrive. A length of 0 returns empty data at once (when
    /// the reads before it have returned), also with nothing buffered and after the peer's data has
    /// ended (an empty last body reads as empty; only after ``close()`` does it throw).
    ///
    /// - Parameters:
    ///   - length: how many bytes to read, 0 or more.
    ///   - timeout: as ``read(maxLength:timeout:)``.
    /// - Throws: ``SocketError/badParam(_:)`` for a negative length; ``SocketError/closedByPeer`` when
    ///   the peer's data ends before `length` bytes (the bytes that did arrive stay readable);
    ///   otherwise as ``read(maxLength:timeout:)``.
    public func read(exactly length: Int, timeout: Duration? = nil) async throws -> Data {
        guard length >= 0 else { throw SocketError.badParam("a read of \(length) bytes") }
        return try await bridge.read(.toLength(length), timeout: timeout)
    }

    /// Reads up to and including the first `delimiter` (for example ``TCPSocket/crlfData``), however the
    /// bytes arrive: a delimiter split across packets is found, and bytes after it stay for the next read.
    ///
    /// - Parameters:
    ///   - delimiter: the bytes that end the read, at least one.
    ///   - maxLength: the delimiter must end within this many bytes (a message of exactly `maxLength`
    ///     bytes, delimiter included, is accepted); `nil` means ``TCPSocket/maxBufferedReadBytes``. When
    ///     that many bytes arrive without it, the connection closes and the read throws
    ///     ``SocketError/readMaxedOut(maxLength:)``, as with ``TCPSocket``.
    ///   - timeout: as ``read(maxLength:timeout:)``.
    /// - Returns: the bytes, delimiter included (as GCDAsyncSocket returns them).
    /// - Throws: ``SocketError/badParam(_:)`` for an empty delimiter or a `maxLength` shorter than it;
    ///   ``SocketError/readMaxedOut(maxLength:)``; ``SocketError/closedByPeer`` when the peer's data ends
    ///   without the delimiter (the bytes stay readable); otherwise as ``read(maxLength:timeout:)``.
    public func read(upTo delimiter: Data, maxLength: Int? = nil, timeout: Duration? = nil) async throws -> Data {
        guard !delimiter.isEmpty else {
            throw SocketError.badParam("a read to a delimiter needs a delimiter of at least one byte")
        }
        let limit = maxLength ?? TCPSocket.maxBufferedReadBytes
        guard limit >= delimiter.count else {
            throw SocketError.badParam("maxLength \(limit) is shorter than the delimiter")
        }
        return try await bridge.read(.toData(delimiter: [UInt8](delimiter), maxLength: limit), timeout: timeout)
    }

    /// Reads through `consumer` (SwiftNIO's `ByteToMessageDecoder` contract): it is shown the unread
    /// bytes whenever more arrive and says how many it consumed and whether the read is complete (see
    /// ``ByteConsumer``); it runs on the connection's event-loop thread. The framing adapters
    /// (FramedSocket's `frames(decodedWith:)`) read with this.
    ///
    /// - Parameters:
    ///   - consumer: shown the unread bytes on the connection's event-loop thread; see ``ByteConsumer``.
    ///   - maxLength: the most unread bytes the consumer may leave wanting more without consuming any;
    ///     0 means ``TCPSocket/maxBufferedReadBytes``. Past it the connection closes with
    ///     ``SocketError/readMaxedOut(maxLength:)``.
    ///   - timeout: as ``read(maxLength:timeout:)``.
    /// - Throws: ``SocketError/decodingFailed(_:)`` with the consumer's error (the connection closes);
    ///   otherwise as ``read(maxLength:timeout:)``.
    public func read(consuming consumer: @escaping ByteConsumer, maxLength: Int = 0, timeout: Duration? = nil) async throws {
        _ = try await bridge.read(.consuming(consumer, maxLength: max(0, maxLength)), timeout: timeout)
    }

    /// Returns once the peer has closed its sending side (sent FIN) and every byte it sent has been
    /// read by a read of this connection. It does not read: bytes still unread keep it waiting. With
    /// ``Options/allowRemoteHalfClosure``, the connection then stays open for writing.
    ///
    /// - Throws: the connection's error when it ends otherwise (a reset, a timeout,
    ///   ``SocketError/connectionClosed`` after ``close()``); `CancellationError`.
    public func waitUntilReadStreamClosed() async throws {
        try await bridge.waitUntilReadStreamClosed()
    }

    // MARK: Writing

    /// Sends `data` after the writes called before it, and returns once every byte is with the kernel
    /// (not necessarily with the peer). Writes while the connection is connecting cannot happen: a
    /// ``TCPConnection`` is always connected when you have it. Empty data returns at once.
    ///
    /// - Parameters:
    ///   - data: the bytes to send, as they are (no framing is added).
    ///   - timeout: counted from when this write becomes the current one; `nil` means none. On
    ///     expiry the connection closes and the write throws ``SocketError/writeTimeout(tag:)`` with the
    ///     write's number on this connection (1 for the first write called, …).
    /// - Throws: the connection's end (``SocketError/closedByPeer``,
    ///   ``SocketError/brokenPipe(operation:errno:)``, ``SocketError/connectionReset(operation:errno:)``,
    ///   …); ``SocketError/writeStreamClosed`` after ``closeWrite()``; `CancellationError` (the bytes are sent
    ///   anyway: a write cannot be taken back once called).
    public func write(_ data: Data, timeout: Duration? = nil) async throws {
        try await bridge.write(data, timeout: asyncSeconds(timeout))
    }

    // MARK: Closing

    /// Closes this side's write direction once the writes called before it are sent: `shutdown(2)`
    /// sends the peer a FIN, a half-close. Reading goes on. Returns after the shutdown, or at once when
    /// the connection has ended or the task is cancelled (the shutdown still follows the writes). Later
    /// writes throw ``SocketError/writeStreamClosed``. When the peer has closed its side too (with
    /// ``Options/allowRemoteHalfClosure``), the connection ends and later calls throw ``SocketError/closedByPeer``.
    public func closeWrite() async {
        await bridge.closeWrite()
    }

    /// Closes the connection now, in both directions (``TCPSocket/disconnect()``), and returns once it is
    /// closed. Pending calls throw ``SocketError/connectionClosed`` at once, and so does every later
    /// call; bytes not yet read are discarded, and writes not yet with the kernel are not sent. To send
    /// everything first, await your writes (or ``closeWrite()``) before closing. Calling it again, or
    /// after the connection ended, returns at once.
    public func close() async {
        await bridge.close()
    }
}

/// Seconds for ``TCPSocket``'s timeouts: `nil` becomes -1 (none), a negative duration 0.
func asyncSeconds(_ duration: Duration?) -> TimeInterval {
    guard let duration else { return -1 }
    let (seconds, attoseconds) = duration.components
    return max(0, Double(seconds) + Double(attoseconds) / 1e18)
}
