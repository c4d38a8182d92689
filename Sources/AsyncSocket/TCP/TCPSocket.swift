import Dispatch
import Foundation
import Synchronization

/// An asynchronous TCP socket in the model of CocoaAsyncSocket's `GCDAsyncSocket`: one object per
/// connection (or per listening socket), calls that return at once and complete later through a
/// ``TCPSocketDelegate``, reads and writes queued in order with a timeout and a tag.
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
    enum State: Equatable {
        case idle, connecting, connected, listening, disconnected
    }

    /// State readable from any thread, guarded by a lock.
    /// Unchecked: the delegate is only ever called on the delegate queue (or the loop thread), as in
    /// GCDAsyncSocket; the lock guards the reference itself.
    struct Shared: @unchecked Sendable {
        weak var delegate: (any TCPSocketDelegate)?
        var delegateQueue: DispatchQueue?
        var userData: (any Sendable)?
        var state: State = .idle
        var localAddress: SocketAddress?
        var remoteAddress: SocketAddress?
        var isNoDelayEnabled = true
        var writeHighWatermark = Int.max
        var writeLowWatermark = 0
    }

    let shared: LockedValue<Shared>

    /// The event loop this socket's state and I/O live on.
    public let eventLoop: EventLoop
    /// Where accepted connections get their loops.
    let group: EventLoopGroup

    // MARK: Loop-confined state

    var state: State = .idle
    var fd: Int32 = -1
    var listeners: [Listener] = []
    var interest: SelectorInterest = []

    var readQueue = RequestQueue<ReadRequest>()
    var buffer = ReadBuffer()
    var completedReads: [(data: Data, tag: Int)] = []
    var isProcessingReads = false
    /// The peer sent FIN; close once the buffered bytes are read or can no longer satisfy a read.
    var readEOF = false
    var readTimeout = RequestTimeout()
    var nextRequestID: UInt64 = 0

    var writeQueue = RequestQueue<WriteRequest>()
    var completedWrites: [Int] = []
    var writeBlocked = false
    var flushScheduled = false
    var needsFlush = false
    var writeTimeout = RequestTimeout()
    var disconnectAfterWritingRequested = false
    /// Bytes queued for writing and not yet sent; mirrored in `queuedWriteBytesMirror` for other threads.
    var queuedWriteBytesOnLoop = 0
    let queuedWriteBytesMirror = Atomic(0)
    var isAboveWriteHighWatermark = false
    var writeHighWatermarkOnLoop = Int.max
    var writeLowWatermarkOnLoop = 0

    var connectTimer: Scheduled?
    var connectGeneration: UInt64 = 0
    var pendingAddresses: [SocketAddress] = []
    var lastConnectError: SocketError?

    /// Bytes a connection may buffer that no queued read has taken yet. Reading from the kernel pauses
    /// at this level (TCP flow control then slows the peer) until reads consume the bytes; a read to a
    /// delimiter with no maximum length that would need more fails with ``SocketError/readMaxedOut(maxLength:)``.
    /// A read to length larger than this may buffer its whole length. 1 MiB.
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
        self.group = group
        self.eventLoop = eventLoop ?? group.next()
    }

    /// A socket for a connection `accept(2)` returned; connected from the start.
    init(accepted fd: Int32, remote: SocketAddress?, on loop: EventLoop, group: EventLoopGroup, inheriting listener: Shared) {
        var shared = Shared()
        shared.delegate = listener.delegate
        shared.delegateQueue = listener.delegateQueue
        shared.isNoDelayEnabled = listener.isNoDelayEnabled
        shared.state = .connected
        shared.localAddress = SocketAddress.read(fd, getsockname)
        shared.remoteAddress = remote
        shared.writeHighWatermark = listener.writeHighWatermark
        shared.writeLowWatermark = listener.writeLowWatermark
        self.shared = LockedValue(shared)
        self.group = group
        self.eventLoop = loop
        self.fd = fd
        self.state = .connected
        self.writeHighWatermarkOnLoop = listener.writeHighWatermark
        self.writeLowWatermarkOnLoop = listener.writeLowWatermark
    }

    // MARK: Configuration

    /// The delegate, held weakly. Setting it from any thread is safe; callbacks already handed to the
    /// delegate queue still go to the delegate that was set when they were issued.
    public var delegate: (any TCPSocketDelegate)? {
        get { shared.withLock { $0.delegate } }
        set { shared.withLock { $0.delegate = newValue } }
    }

    /// The queue delegate methods run on; `nil` means the event-loop thread.
    public var delegateQueue: DispatchQueue? {
        get { shared.withLock { $0.delegateQueue } }
        set { shared.withLock { $0.delegateQueue = newValue } }
    }

    /// Sets the delegate and its queue together, atomically (GCDAsyncSocket's `setDelegate:delegateQueue:`).
    public func setDelegate(_ delegate: (any TCPSocketDelegate)?, delegateQueue: DispatchQueue?) {
        shared.withLock {
            $0.delegate = delegate
            $0.delegateQueue = delegateQueue
        }
    }

    /// Any value the app wants to keep with this socket (GCDAsyncSocket's `userData`).
    public var userData: (any Sendable)? {
        get { shared.withLock { $0.userData } }
        set { shared.withLock { $0.userData = newValue } }
    }

    /// Whether `TCP_NODELAY` is set, disabling Nagle's algorithm so small writes go out at once
    /// (tcp(7)). On by default; applies to the current connection and to later ones, and accepted
    /// sockets inherit it from their listener.
    public var isNoDelayEnabled: Bool {
        get { shared.withLock { $0.isNoDelayEnabled } }
        set {
            shared.withLock { $0.isNoDelayEnabled = newValue }
            onLoop { [self] in if fd >= 0 { try? applyNoDelay(fd) } }
        }
    }

    /// Queued write bytes above which the delegate hears
    /// ``TCPSocketDelegate/socket(_:writeQueueDidExceedHighWatermark:)``, so a producer can pause instead
    /// of growing memory without bound. Default `Int.max` (off). Takes effect for later writes; accepted
    /// sockets inherit it from their listener.
    public var writeHighWatermark: Int {
        get { shared.withLock { $0.writeHighWatermark } }
        set {
            shared.withLock { $0.writeHighWatermark = newValue }
            onLoop { [self] in writeHighWatermarkOnLoop = newValue }
        }
    }

    /// Queued write bytes at or below which, after the high watermark was exceeded, the delegate hears
    /// ``TCPSocketDelegate/socket(_:writeQueueDidFallToLowWatermark:)``. Default 0 (fully drained).
    /// Accepted sockets inherit it from their listener.
    public var writeLowWatermark: Int {
        get { shared.withLock { $0.writeLowWatermark } }
        set {
            shared.withLock { $0.writeLowWatermark = newValue }
            onLoop { [self] in writeLowWatermarkOnLoop = newValue }
        }
    }

    /// Bytes queued for writing that the kernel has not taken yet. Safe from any thread; a snapshot.
    public var queuedWriteBytes: Int { queuedWriteBytesMirror.load(ordering: .relaxed) }

    // MARK: Diagnostics

    /// True once connected (or accepted), until disconnected.
    public var isConnected: Bool { shared.withLock { $0.state == .connected } }
    /// True before the first connect and after a disconnect; false while connecting, connected or listening.
    public var isDisconnected: Bool { shared.withLock { $0.state == .idle || $0.state == .disconnected } }
    /// The peer's numeric address (`"127.0.0.1"`, `"::1"`) while connected, else `nil`.
    public var connectedHost: String? { connectedAddress?.host }
    /// The peer's port while connected, else 0.
    public var connectedPort: UInt16 { connectedAddress?.port ?? 0 }
    /// The peer's address while connected.
    public var connectedAddress: SocketAddress? { shared.withLock { $0.remoteAddress } }
    /// This side's numeric address while connected or listening.
    public var localHost: String? { localAddress?.host }
    /// This side's port while connected or listening (for a listener on port 0: the port the kernel
    /// chose), else 0.
    public var localPort: UInt16 { localAddress?.port ?? 0 }
    /// This side's address while connected or listening.
    public var localAddress: SocketAddress? { shared.withLock { $0.localAddress } }

    /// Runs `block` on the socket's event-loop thread with the raw descriptor (-1 when there is none;
    /// the first listening descriptor for a listener), for socket options this class does not wrap
    /// (GCDAsyncSocket's `performBlock:` with `socketFD`). Do not close the descriptor or change its
    /// blocking mode.
    public func perform(_ block: @escaping @Sendable (Int32) -> Void) {
        onLoop { [self] in block(fd >= 0 ? fd : listeners.first?.fd ?? -1) }
    }

    // MARK: Disconnecting

    /// Closes the connection (or stops listening, or abandons a connect) now. Queued reads and writes
    /// are discarded. ``TCPSocketDelegate/socketDidDisconnect(_:withError:)`` follows with a `nil` error
    /// unless the socket was already disconnected.
    public func disconnect() {
        onLoop { [self] in close(error: nil) }
    }

    /// Closes the connection once every queued write has been sent (GCDAsyncSocket's
    /// `disconnectAfterWriting`). Pending reads are discarded at once and new reads and writes are
    /// refused. The disconnect callback then has a `nil` error.
    public func disconnectAfterWriting() {
        onLoop { [self] in
            guard state == .connecting || state == .connected else { return }
            disconnectAfterWritingRequested = true
            readTimeout.cancel()
            _ = readQueue.removeAll()
            if state == .connected && writeQueue.isEmpty { close(error: nil) }
        }
    }

    // MARK: Internals shared by the extensions

    /// Runs `body` on the loop: inline when already there, otherwise as a task.
    @inline(__always)
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop { body() } else { eventLoop.execute(body) }
    }

    /// Calls the delegate on its queue (or inline on the loop when the queue is `nil`).
    func notify(_ call: @escaping (any TCPSocketDelegate) -> Void) {
        let (delegate, queue) = shared.withLock { ($0.delegate, $0.delegateQueue) }
        guard let delegate else { return }
        guard let queue else {
            call(delegate)
            return
        }
        let transfer = UnsafeTransfer { call(delegate) }
        queue.async { transfer.value() }
    }

    /// Claims an unused socket for `newState` (connecting or listening), synchronously, so a second
    /// connect or accept fails at once.
    /// - Throws: ``SocketError/badConfig(_:)`` without a delegate or when the socket is in use.
    func claim(for newState: State, verb: String) throws(SocketError) {
        try shared.withLock { shared throws(SocketError) in
            guard shared.delegate != nil else {
                throw SocketError.badConfig("Attempting to \(verb) without a delegate. Set a delegate first.")
            }
            guard shared.state == .idle || shared.state == .disconnected else {
                throw SocketError.badConfig("Attempting to \(verb) while connected, connecting or accepting. Disconnect first.")
            }
            shared.state = newState
        }
    }

    func applyNoDelay(_ fd: Int32) throws(SocketError) {
        try Posix.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: isNoDelayEnabled ? 1 : 0)
    }

    /// Brings the selector's interest for `fd` in line with what the socket needs: reading while it
    /// may buffer more, writing while a write waits for space.
    func updateInterest() {
        guard fd >= 0 else { return }
        var wanted: SelectorInterest = []
        if state == .connecting || writeBlocked { wanted.insert(.write) }
        if state == .connected && !readEOF && buffer.count < readBufferLimit { wanted.insert(.read) }
        guard wanted != interest else { return }
        do {
            try eventLoop.setInterest(fd, wanted)
            interest = wanted
        } catch {
            close(error: error)
        }
    }

    /// Ends the connection, the connect attempt or the listening, and reports `error` (nil = on purpose).
    /// Does nothing when there is nothing to end. Loop thread only.
    func close(error: SocketError?) {
        guard state != .idle && state != .disconnected else { return }
        connectGeneration &+= 1
        connectTimer?.cancel()
        connectTimer = nil
        readTimeout.cancel()
        writeTimeout.cancel()
        if fd >= 0 {
            eventLoop.deregister(fd)
            Posix.close(fd)
            fd = -1
        }
        for listener in listeners { listener.close() }
        listeners = []
        interest = []
        _ = readQueue.removeAll()
        _ = writeQueue.removeAll()
        queuedWriteBytesOnLoop = 0
        queuedWriteBytesMirror.store(0, ordering: .relaxed)
        isAboveWriteHighWatermark = false
        buffer.reset()
        readEOF = false
        writeBlocked = false
        disconnectAfterWritingRequested = false
        pendingAddresses = []
        lastConnectError = nil
        state = .disconnected
        shared.withLock {
            $0.state = .disconnected
            $0.localAddress = nil
            $0.remoteAddress = nil
        }
        notify { $0.socketDidDisconnect(self, withError: error) }
    }
}

extension TCPSocket: Selectable {
    func selectorReadable() {
        if state == .connected { readFromSocket() }
    }

    func selectorWritable() {
        switch state {
        case .connecting: finishConnect()
        case .connected:
            writeBlocked = false
            flushWrites()
        default: break
        }
    }
}

/// Carries a value across a `@Sendable` boundary where the program's structure (a serial queue, the
/// loop thread) already guarantees it is used by one thread at a time.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
