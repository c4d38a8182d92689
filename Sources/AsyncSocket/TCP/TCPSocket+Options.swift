import CAsyncSocketShims
import Dispatch
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// TCP keep-alive probing (tcp(7): `SO_KEEPALIVE`, `TCP_KEEPIDLE`, `TCP_KEEPINTVL`, `TCP_KEEPCNT`): the
/// kernel probes an idle connection and drops it when the peer stops answering.
public struct TCPKeepAlive: Sendable, Equatable {
    /// Seconds of idleness before the first probe.
    public var idle: Int32
    /// Seconds between probes.
    public var interval: Int32
    /// Unanswered probes after which the connection is dropped (`ETIMEDOUT`).
    public var count: Int32

    public init(idle: Int32, interval: Int32, count: Int32) {
        self.idle = idle
        self.interval = interval
        self.count = count
    }
}

extension TCPSocket {
    /// Every setting of a socket, copied to connections it accepts.
    struct Options: Sendable {
        var isNoDelayEnabled = true
        var writeHighWatermark = Int.max
        var writeLowWatermark = 0
        var keepAlive: TCPKeepAlive?
        var sendBufferSize: Int?
        var receiveBufferSize: Int?
        var lingerSeconds: Int?
        var isIPv4Enabled = true
        var isIPv6Enabled = true
        var isIPv4PreferredOverIPv6 = true
        var alternateAddressDelay: TimeInterval = 0.3
        var autoDisconnectOnClosedReadStream = true
        var isReusePortEnabled = false
    }

    /// Sets an option everywhere: for readers on any thread, on the loop, and (through `apply`) on the
    /// open descriptor.
    private func set<Value: Sendable>(_ keyPath: WritableKeyPath<Options, Value> & Sendable, _ value: Value, reapply: Bool) {
        shared.withLock { $0.options[keyPath: keyPath] = value }
        onLoop { [self] in
            loopOptions = shared.withLock { $0.optionsBox }
            if reapply, case .connected(let connection) = lifecycle, connection.fd >= 0 {
                try? applyOptions(to: connection.fd, isUnixDomain: isUnixDomain)
            }
        }
    }

    private func get<Value>(_ keyPath: KeyPath<Options, Value>) -> Value {
        shared.withLock { $0.options[keyPath: keyPath] }
    }

    /// Whether `TCP_NODELAY` is set, disabling Nagle's algorithm so small writes go out at once
    /// (tcp(7)). On by default; applies to the current connection and to later ones. Ignored for
    /// Unix-domain sockets.
    public var isNoDelayEnabled: Bool {
        get { get(\.isNoDelayEnabled) }
        set { set(\.isNoDelayEnabled, newValue, reapply: true) }
    }

    /// Keep-alive probing for the connection, or `nil` (the default) for the system's setting, which is
    /// off. Applies to the current connection and later ones.
    public var keepAlive: TCPKeepAlive? {
        get { get(\.keepAlive) }
        set { set(\.keepAlive, newValue, reapply: true) }
    }

    /// The kernel's send buffer size in bytes (`SO_SNDBUF`; Linux doubles the value given), or `nil`
    /// (default) for the system's. Set it before connecting or listening to affect window scaling.
    public var sendBufferSize: Int? {
        get { get(\.sendBufferSize) }
        set { set(\.sendBufferSize, newValue, reapply: true) }
    }

    /// The kernel's receive buffer size in bytes (`SO_RCVBUF`; Linux doubles the value given), or `nil`
    /// (default) for the system's. Set it before connecting or listening to affect window scaling.
    public var receiveBufferSize: Int? {
        get { get(\.receiveBufferSize) }
        set { set(\.receiveBufferSize, newValue, reapply: true) }
    }

    /// `SO_LINGER` in seconds: how long closing may wait for unsent data; 0 makes ``disconnect()`` send
    /// a reset (RST) at once. `nil` (default): the system's behaviour, a graceful close in the background.
    public var lingerSeconds: Int? {
        get { get(\.lingerSeconds) }
        set { set(\.lingerSeconds, newValue, reapply: true) }
    }

    /// Whether listening sockets set `SO_REUSEPORT` (socket(7)), so several processes (or several sockets
    /// in one) can listen on the same address and port and the kernel spreads incoming connections
    /// over them: the way to scale one server past a process's open-file limit. Default false; set it
    /// before ``accept(onInterface:port:backlog:)``, and in every process sharing the port.
    public var isReusePortEnabled: Bool {
        get { get(\.isReusePortEnabled) }
        set { set(\.isReusePortEnabled, newValue, reapply: false) }
    }

    /// Whether connects and accepts use IPv4 (GCDAsyncSocket's `IPv4Enabled`). Default true.
    public var isIPv4Enabled: Bool {
        get { get(\.isIPv4Enabled) }
        set { set(\.isIPv4Enabled, newValue, reapply: false) }
    }

    /// Whether connects and accepts use IPv6 (GCDAsyncSocket's `IPv6Enabled`). Default true.
    public var isIPv6Enabled: Bool {
        get { get(\.isIPv6Enabled) }
        set { set(\.isIPv6Enabled, newValue, reapply: false) }
    }

    /// Whether a connect to a name with both kinds of address tries IPv4 first
    /// (GCDAsyncSocket's `IPv4PreferredOverIPv6`). Default true.
    public var isIPv4PreferredOverIPv6: Bool {
        get { get(\.isIPv4PreferredOverIPv6) }
        set { set(\.isIPv4PreferredOverIPv6, newValue, reapply: false) }
    }

    /// Seconds a connect attempt gets before the next address (of the other family first) is tried in
    /// parallel: Happy Eyeballs (RFC 8305, section 5), GCDAsyncSocket's `alternateAddressDelay`. The
    /// first attempt to succeed wins. Default 0.3 s.
    public var alternateAddressDelay: TimeInterval {
        get { get(\.alternateAddressDelay) }
        set { set(\.alternateAddressDelay, newValue, reapply: false) }
    }

    /// Whether the socket disconnects (with ``SocketError/closedByPeer``) once the peer has closed its
    /// side and every byte it sent has been read (GCDAsyncSocket's `autoDisconnectOnClosedReadStream`).
    /// Default true. When false the socket stays open for writing and the delegate hears
    /// ``TCPSocketDelegate/socketDidCloseReadStream(_:)`` instead: a half-close.
    public var autoDisconnectOnClosedReadStream: Bool {
        get { get(\.autoDisconnectOnClosedReadStream) }
        set { set(\.autoDisconnectOnClosedReadStream, newValue, reapply: false) }
    }

    /// Queued write bytes above which the delegate hears
    /// ``TCPSocketDelegate/socket(_:writeQueueDidExceedHighWatermark:)``, so a producer can pause instead
    /// of growing memory without bound. Default `Int.max` (off). Takes effect for later writes; accepted
    /// sockets inherit it from their listener.
    public var writeHighWatermark: Int {
        get { get(\.writeHighWatermark) }
        set { set(\.writeHighWatermark, newValue, reapply: false) }
    }

    /// Queued write bytes at or below which, after the high watermark was exceeded, the delegate hears
    /// ``TCPSocketDelegate/socket(_:writeQueueDidFallToLowWatermark:)``. Default 0 (fully drained).
    /// Accepted sockets inherit it from their listener.
    public var writeLowWatermark: Int {
        get { get(\.writeLowWatermark) }
        set { set(\.writeLowWatermark, newValue, reapply: false) }
    }

    /// Bytes queued for writing that the kernel has not taken yet. Safe from any thread; a snapshot.
    public var queuedWriteBytes: Int { queuedWriteBytesMirror.load(ordering: .relaxed) }

    // MARK: Applying options to descriptors (loop thread)

    /// True when this socket is (or listens as) a Unix-domain socket.
    var isUnixDomain: Bool { shared.withLock { ($0.remoteAddress ?? $0.localAddress)?.family == .unix } }

    /// Sets the options that apply to a stream socket: `TCP_NODELAY`, keep-alive, buffer sizes, linger.
    func applyOptions(to fd: Int32, isUnixDomain: Bool) throws(SocketError) {
        let options = shared.withLock { $0.options }
        if let size = options.sendBufferSize {
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_SNDBUF, value: Int32(clamping: size))
        }
        if let size = options.receiveBufferSize {
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: Int32(clamping: size))
        }
        if let seconds = options.lingerSeconds {
            var value = linger(l_onoff: 1, l_linger: Int32(clamping: seconds))
            _ = try Posix.check("setsockopt") {
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
            }
        }
        #if canImport(Darwin)
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_NOSIGPIPE, value: 1)
        #endif
        guard !isUnixDomain else { return }
        try Posix.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: options.isNoDelayEnabled ? 1 : 0)
        if let keepAlive = options.keepAlive {
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_KEEPALIVE, value: 1)
            #if canImport(Glibc)
                try Posix.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPIDLE, value: keepAlive.idle)
            #else
                try Posix.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPALIVE, value: keepAlive.idle)
            #endif
            try Posix.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPINTVL, value: keepAlive.interval)
            try Posix.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_KEEPCNT, value: keepAlive.count)
        }
    }

    /// A nonblocking, close-on-exec stream socket for `family` with this socket's options applied.
    func makeStreamSocket(_ family: SocketAddress.Family) throws(SocketError) -> Int32 {
        let domain: Int32 = family == .inet6 ? AF_INET6 : (family == .unix ? AF_UNIX : AF_INET)
        let socketFD = try Posix.check("socket") { socket(domain, cass_sock_stream_nonblock(), 0) }
        do {
            #if !os(Linux)
                try Posix.setNonBlocking(socketFD)
            #endif
            try applyOptions(to: socketFD, isUnixDomain: family == .unix)
        } catch {
            Posix.close(socketFD)
            throw error
        }
        return socketFD
    }
}
