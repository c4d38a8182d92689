import Dispatch
import Foundation
import Synchronization

/// An asynchronous TCP socket in the model of CocoaAsyncSocket's `GCDAsyncSocket`: one object per
/// connection (or per listening socket), calls that return at once and complete later through a
/// ``TCPSocketDelegate``, reads and writes queued in order with a timeout and a tag. Unix-domain stream
/// sockets work the same way.
///
/// ```swift
/// let socket = TCPSocket(delegate: self, delegateQueue: .main)
/// try socket.connect(toHost: "example.com", onPort: 7000, withTimeout: 20)
/// socket.write(hello, withTimeout: -1, tag: 1)        // queued now, sent once connected
/// socket.readData(toLength: 4, withTimeout: 30, tag: 2)
/// ```
///
/// Threading: every method and property may be used from any thread. The socket's state lives on one
/// ``EventLoop`` thread (``eventLoop``); calls hop there and return at once. Delegate methods run on
/// ``delegateQueue`` (or on the loop thread when it is `nil`), serially and in the order events happened.
///
/// Lifetime: the library keeps a socket alive while it is connecting, connected or listening; keep your
/// own reference to sockets you want to use (accepted sockets especially). After ``disconnect()`` a
/// socket may connect again.
public final class TCPSocket: @unchecked Sendable {
    /// The stage of ``Lifecycle`` without its data, as other threads see it (``Shared/state``).
    enum State: Equatable {
        case idle, connecting, connected, listening, disconnected
    }

    /// The stage of ``lifecycle``. Loop thread only.
    var state: State { lifecycle.state }

    /// State readable from any thread, guarded by a lock. Unchecked: the delegate is only ever called on
    /// the delegate queue (or the loop thread), as in GCDAsyncSocket; the lock guards the reference.
    /// Every idle connection carries one, so what is rarely set is held by reference: the options (shared
    /// by all the connections one listener accepted until one of them changes its own) and `userData`.
    struct Shared: @unchecked Sendable {
        weak var delegate: (any TCPSocketDelegate)?
        var delegateQueue: DispatchQueue?
        var state: State = .idle
        var localAddress: SocketAddress?
        var remoteAddress: SocketAddress?
        /// The TLS handshake is done (``TCPSocket/isSecure``).
        var isSecure = false
        /// What the last TLS handshake agreed on; kept after the connection ends.
        var tlsSummary: TLSSummary?
        /// The options, never changed in place: setting one makes a new box.
        var optionsBox = OptionsBox(Options())
        var userDataBox: UserDataBox?
        /// The thread running a delegate callback of this socket right now, if any.
        var callbackThread: pthread_t?

        var options: Options {
            get { optionsBox.options }
            set { optionsBox = OptionsBox(newValue) }
        }

        var userData: (any Sendable)? {
            get { userDataBox?.value }
            set { userDataBox = newValue.map(UserDataBox.init) }
        }
    }

    /// ``Options`` held by reference, immutable.
    final class OptionsBox: Sendable {
        let options: Options
        init(_ options: Options) { self.options = options }
    }

    /// ``userData`` held by reference, immutable.
    final class UserDataBox: @unchecked Sendable {
        let value: any Sendable
        init(_ value: any Sendable) { self.value = value }
    }

    let shared: LockedValue<Shared>

    /// The event loop this socket's state and I/O live on.
    public let eventLoop: EventLoop
    /// Where accepted connections get their loops.
    let group: EventLoopGroup

    // MARK: Loop-confined state
    // Touched on the loop thread only, so the compiler's dynamic exclusivity checks (a measurable cost
    // on the per-message path) are turned off for these properties.

    /// The delegate and its queue as the loop sees them: copies of `shared`'s, updated on the loop
    /// whenever they are set, so a callback on the loop thread needs no lock.
    @exclusivity(unchecked) weak var delegateOnLoop: (any TCPSocketDelegate)?
    @exclusivity(unchecked) var delegateQueueOnLoop: DispatchQueue?

    /// The options as the loop sees them (the box `shared` holds), refreshed on the loop whenever one
    /// is set: the loop consults the write watermarks on every write, with no lock.
    @exclusivity(unchecked) var loopOptions: OptionsBox
    /// Where the socket is in its life, with what that stage owns (see ``Lifecycle``).
    @exclusivity(unchecked) var lifecycle = Lifecycle.idle
    @exclusivity(unchecked) var nextRequestID: UInt64 = 0
    /// Counts connect attempts, so a late answer (a name resolved after a timeout) is recognised as stale.
    @exclusivity(unchecked) var connectGeneration: UInt64 = 0
    /// Bytes queued for writing and not yet sent, for other threads (``queuedWriteBytes``).
    let queuedWriteBytesMirror = Atomic(0)

    /// Bytes a connection may buffer that no queued read has taken yet. Reading from the kernel pauses
    /// at this level (TCP flow control then slows the peer) until reads consume the bytes; a read to a
    /// delimiter with no maximum length that would need more fails with ``SocketError/readMaxedOut(maxLength:)``.
    /// A read to length larger than this may buffer its whole length, and a read with a larger maximum
    /// length (to a delimiter or a frame end) up to that maximum. 1 MiB.
    public static let maxBufferedReadBytes = 1 << 20

    /// Creates a socket that is neither connected nor listening.
    ///
    /// - Parameters:
    ///   - delegate: receives the callbacks; held weakly.
    ///   - delegateQueue: the queue every delegate method runs on, as in GCDAsyncSocket. `nil` runs
    ///     them directly on the event-loop thread, with no queue hop: the fastest choice for servers,
    ///     provided the delegate never blocks.
    ///   - group: the event loops this socket and the connections it accepts run on.
    ///   - eventLoop: the loop for this socket itself; by default the group's next one. Give the loop
    ///     that runs your own state to receive loop-thread callbacks on it.
    public init(
        delegate: (any TCPSocketDelegate)?,
        delegateQueue: DispatchQueue?,
        group: EventLoopGroup = .shared,
        eventLoop: EventLoop? = nil
    ) {
        var shared = Shared()
        shared.delegate = delegate
        shared.delegateQueue = delegateQueue
        self.shared = LockedValue(shared)
        self.loopOptions = shared.optionsBox
        self.group = group
        self.eventLoop = eventLoop ?? group.next()
        self.delegateOnLoop = delegate
        self.delegateQueueOnLoop = delegateQueue
    }

    /// A socket for a descriptor that is already connected: one `accept(2)` returned, or one adopted.
    init(
        connected fd: Int32, local: SocketAddress?, remote: SocketAddress?, on loop: EventLoop, group: EventLoopGroup, like template: Shared
    ) {
        var shared = Shared()
        shared.delegate = template.delegate
        shared.delegateQueue = template.delegateQueue
        shared.optionsBox = template.optionsBox
        shared.state = .connected
        shared.localAddress = local
        shared.remoteAddress = remote
        self.shared = LockedValue(shared)
        self.loopOptions = template.optionsBox
        self.group = group
        self.eventLoop = loop
        self.lifecycle = .connected(ConnectionState(fd: fd))
        self.delegateOnLoop = template.delegate
        self.delegateQueueOnLoop = template.delegateQueue
    }

    /// Adopts a descriptor that is already connected (GCDAsyncSocket's
    /// `socketFromConnectedSocketFD:delegate:delegateQueue:error:`): the socket owns it from now on,
    /// makes it nonblocking, and closes it on disconnect. No connect callback follows; the socket is
    /// connected at once.
    ///
    /// - Throws: ``SocketError/badParam(_:)`` when `fd` is not a connected stream socket;
    ///   ``SocketError/posix(operation:errno:)`` when it cannot be made nonblocking.
    public convenience init(
        fromConnectedSocketFD fd: Int32,
        delegate: (any TCPSocketDelegate)?,
        delegateQueue: DispatchQueue?,
        group: EventLoopGroup = .shared
    ) throws(SocketError) {
        guard (try? Posix.getOption(fd, level: SOL_SOCKET, name: SO_TYPE)) == Posix.streamSocketType else {
            throw SocketError.badParam("descriptor \(fd) is not a stream socket")
        }
        guard let remote = SocketAddress.read(fd, getpeername) else {
            throw SocketError.badParam("descriptor \(fd) is not connected")
        }
        try Posix.setNonBlocking(fd)
        var template = Shared()
        template.delegate = delegate
        template.delegateQueue = delegateQueue
        let loop = group.next()
        self.init(connected: fd, local: SocketAddress.read(fd, getsockname), remote: remote, on: loop, group: group, like: template)
        onLoop { [self] in startConnected() }
    }

    // MARK: Internals shared by the extensions

    /// Runs `body` on the loop: inline when already there, otherwise as a task.
    @inline(__always)
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop { body() } else { eventLoop.execute(body) }
    }

    /// Registers a connected descriptor (accepted, adopted or connected) with the loop and starts
    /// reading. Loop thread only.
    func startConnected() {
        eventLoop.assertInEventLoop()
        guard case .connected(let connection) = lifecycle else { return }
        do {
            try eventLoop.register(connection.fd, handler: self, interest: [])
            // Requests queued before registration may have computed an interest the loop never saw.
            connection.interest = []
            updateInterest(connection)
            processReads(connection)
            armWriteTimer(connection)
            scheduleFlush(connection)
        } catch {
            close(error: error)
        }
    }

    /// Brings the selector's interest for the connection's descriptor in line with what it needs:
    /// reading while it may buffer more, writing while a write waits for space.
    func updateInterest(_ connection: ConnectionState) {
        guard connection.fd >= 0, isCurrent(connection) else { return }
        var wanted: SelectorInterest = []
        if connection.writeBlocked { wanted.insert(.write) }
        if !connection.readEOF && connection.buffer.count < readBufferLimit(connection) { wanted.insert(.read) }
        guard wanted != connection.interest else { return }
        do {
            try eventLoop.setInterest(connection.fd, wanted)
            connection.interest = wanted
        } catch {
            close(error: error)
        }
    }

    /// Whether `connection` is this socket's connection, connected now.
    @inline(__always)
    func isCurrent(_ connection: ConnectionState) -> Bool {
        if case .connected(let current) = lifecycle { return current === connection }
        return false
    }
}

extension TCPSocket: Selectable {
    func selectorReadable() {
        if case .connected(let connection) = lifecycle { readFromSocket(connection) }
    }

    func selectorWritable() {
        guard case .connected(let connection) = lifecycle else { return }
        connection.writeBlocked = false
        flushWrites(connection)
    }
}

/// Carries a value across a `@Sendable` boundary where the program's structure (a serial queue, the
/// loop thread) already guarantees it is used by one thread at a time.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
