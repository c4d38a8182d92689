import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TCPConnection {
    /// TCP keep-alive probing (tcp(7): `SO_KEEPALIVE`, `TCP_KEEPIDLE`, `TCP_KEEPINTVL`, `TCP_KEEPCNT`):
    /// the kernel probes a connection that has been idle for ``idle``, every ``interval``, and drops it
    /// after ``count`` unanswered probes; calls then throw ``SocketError/connectionTimedOut(operation:errno:)``.
    ///
    /// The kernel counts in whole seconds: each duration is rounded up to a whole number of seconds, and
    /// to at least 1 s.
    public struct KeepAlive: Sendable, Equatable {
        /// Idleness before the first probe.
        public var idle: Duration
        /// Time between probes.
        public var interval: Duration
        /// Unanswered probes after which the connection is dropped; at least 1.
        public var count: Int

        /// Probing after `idle`, every `interval`, dropping the connection after `count` unanswered probes.
        public init(idle: Duration, interval: Duration, count: Int) {
            self.idle = idle
            self.interval = interval
            self.count = count
        }

        /// As ``TCPSocket/keepAlive`` takes it: whole seconds, each at least 1.
        var socketValue: TCPKeepAlive {
            TCPKeepAlive(
                idle: Int32(clamping: wholeSeconds(idle, minimum: 1)),
                interval: Int32(clamping: wholeSeconds(interval, minimum: 1)),
                count: Int32(clamping: max(1, count)))
        }

        /// From ``TCPSocket/keepAlive``.
        init(_ value: TCPKeepAlive) {
            self.init(idle: .seconds(value.idle), interval: .seconds(value.interval), count: Int(value.count))
        }
    }

    /// Everything that can be set on a connection, for ``connect(toHost:port:timeout:tls:options:group:)``
    /// and its siblings, and (as ``TCPListener/Options/connectionOptions``) for the connections a
    /// ``TCPListener`` accepts. The defaults are those of a ``TCPSocket``.
    ///
    /// The first five (``isNoDelayEnabled``, ``keepAlive``, ``sendBufferSize``, ``receiveBufferSize``,
    /// ``linger``) can also be changed on an established connection, through the properties of the same
    /// names on ``TCPConnection``. The others decide how the connection is made, and so only matter to a
    /// connect. ``TCPSocket``'s write watermarks have no counterpart: awaiting each
    /// ``TCPConnection/write(_:timeout:)`` is the backpressure.
    ///
    /// ```swift
    /// var options = TCPConnection.Options()
    /// options.keepAlive = .init(idle: .seconds(60), interval: .seconds(10), count: 5)
    /// options.prefersIPv4 = false
    /// let connection = try await TCPConnection.connect(toHost: "example.com", port: 443, options: options)
    /// ```
    public struct Options: Sendable, Equatable {
        /// Whether `TCP_NODELAY` is set, disabling Nagle's algorithm so small writes go out at once
        /// (tcp(7)). Default true. Ignored for Unix-domain connections.
        public var isNoDelayEnabled = true

        /// Keep-alive probing, or `nil` (the default) for the system's setting, which is off. Ignored
        /// for Unix-domain connections.
        public var keepAlive: KeepAlive?

        /// The kernel's send buffer size in bytes (`SO_SNDBUF`; Linux doubles the value given), or `nil`
        /// (the default) for the system's. Given before connecting, it also bounds TCP window scaling.
        public var sendBufferSize: Int?

        /// The kernel's receive buffer size in bytes (`SO_RCVBUF`; Linux doubles the value given), or
        /// `nil` (the default) for the system's. Given before connecting, it also bounds the window the
        /// connection advertises.
        public var receiveBufferSize: Int?

        /// `SO_LINGER`: how long closing the descriptor may wait for unsent bytes (rounded up to whole
        /// seconds). `.zero` makes ``TCPConnection/close()`` reset the connection (RST) at once, and the
        /// peer's calls then throw ``SocketError/connectionReset(operation:errno:)``. `nil` (the
        /// default): the system's graceful close in the background.
        public var linger: Duration?

        /// `false` (the default): the peer's FIN ends the connection once its bytes are read, and later
        /// calls throw ``SocketError/closedByPeer``. `true`: the peer's FIN only ends the read direction;
        /// reads then throw ``SocketError/closedByPeer`` while writes go on until
        /// ``TCPConnection/closeWrite()`` or ``TCPConnection/close()`` (a half-close;
        /// ``TCPSocket/autoDisconnectOnClosedReadStream`` off).
        public var allowRemoteHalfClosure = false

        /// Whether a connect may use IPv4 addresses. Default true. (A listener's
        /// ``TCPListener/Options/isIPv4Enabled`` decides for accepted connections.)
        public var isIPv4Enabled = true

        /// Whether a connect may use IPv6 addresses. Default true.
        public var isIPv6Enabled = true

        /// Whether a connect to a name with both kinds of address tries IPv4 first. Default true.
        public var prefersIPv4 = true

        /// How long a connect attempt gets before the next address (of the other family first) is tried
        /// in parallel: Happy Eyeballs (RFC 8305, section 5). The first attempt to succeed wins.
        /// Default 300 ms.
        public var alternateAddressDelay: Duration = .milliseconds(300)

        /// The local interface a connect binds to before connecting: an interface name (`"lo"`,
        /// `"eth0"`), or a numeric address of this host (`"127.0.0.1"`, `"::1"`), optionally with a
        /// port (`"127.0.0.1:5000"`, `"[::1]:5000"`). `nil` (the default): the system chooses. Ignored
        /// for Unix-domain connections. An interface without an address of the peer's family fails the
        /// connect with ``SocketError/badParam(_:)``.
        public var localInterface: String?

        /// Options with the values given, each parameter defaulting to the property's default: no-delay
        /// on, the system's keep-alive, buffer sizes and linger, no half-close, IPv4 and IPv6 with IPv4
        /// first and a 300 ms Happy Eyeballs delay, any local interface. `Options()` is the defaults;
        /// `Options(allowRemoteHalfClosure: true)` changes one.
        public init(
            isNoDelayEnabled: Bool = true,
            keepAlive: KeepAlive? = nil,
            sendBufferSize: Int? = nil,
            receiveBufferSize: Int? = nil,
            linger: Duration? = nil,
            allowRemoteHalfClosure: Bool = false,
            isIPv4Enabled: Bool = true,
            isIPv6Enabled: Bool = true,
            prefersIPv4: Bool = true,
            alternateAddressDelay: Duration = .milliseconds(300),
            localInterface: String? = nil
        ) {
            self.isNoDelayEnabled = isNoDelayEnabled
            self.keepAlive = keepAlive
            self.sendBufferSize = sendBufferSize
            self.receiveBufferSize = receiveBufferSize
            self.linger = linger
            self.allowRemoteHalfClosure = allowRemoteHalfClosure
            self.isIPv4Enabled = isIPv4Enabled
            self.isIPv6Enabled = isIPv6Enabled
            self.prefersIPv4 = prefersIPv4
            self.alternateAddressDelay = alternateAddressDelay
            self.localInterface = localInterface
        }

        /// Sets these options on `socket` before it connects (or listens, for the options its accepted
        /// connections inherit).
        func apply(to socket: TCPSocket) {
            socket.isNoDelayEnabled = isNoDelayEnabled
            socket.keepAlive = keepAlive?.socketValue
            socket.sendBufferSize = sendBufferSize
            socket.receiveBufferSize = receiveBufferSize
            socket.lingerSeconds = linger.map { wholeSeconds($0, minimum: 0) }
            socket.autoDisconnectOnClosedReadStream = !allowRemoteHalfClosure
            socket.isIPv4Enabled = isIPv4Enabled
            socket.isIPv6Enabled = isIPv6Enabled
            socket.isIPv4PreferredOverIPv6 = prefersIPv4
            socket.alternateAddressDelay = max(0, asyncSeconds(alternateAddressDelay))
        }
    }

    // MARK: Options of the established connection

    /// Whether `TCP_NODELAY` is set on the connection (see ``Options/isNoDelayEnabled``). Setting it
    /// applies it to the descriptor on the connection's event-loop thread, shortly after the setter
    /// returns; a failure there is ignored. May be read and set from any task.
    public var isNoDelayEnabled: Bool {
        get { socket.isNoDelayEnabled }
        set { socket.isNoDelayEnabled = newValue }
    }

    /// The connection's keep-alive probing, `nil` when it is the system's (see ``Options/keepAlive``).
    /// Setting it applies it on the connection's event-loop thread, as ``isNoDelayEnabled``; setting
    /// `nil` turns probing off (`SO_KEEPALIVE` 0).
    public var keepAlive: KeepAlive? {
        get { socket.keepAlive.map(KeepAlive.init) }
        set {
            socket.keepAlive = newValue?.socketValue
            if newValue == nil {
                socket.perform { fd in
                    guard fd >= 0 else { return }
                    try? Posix.setOption(fd, level: SOL_SOCKET, name: SO_KEEPALIVE, value: 0)
                }
            }
        }
    }

    /// The send buffer size in bytes given for the connection (`SO_SNDBUF`), `nil` when it is the
    /// system's. This is the value given, not the kernel's doubled one. Setting it applies it as
    /// ``isNoDelayEnabled``.
    public var sendBufferSize: Int? {
        get { socket.sendBufferSize }
        set { socket.sendBufferSize = newValue }
    }

    /// The receive buffer size in bytes given for the connection (`SO_RCVBUF`), `nil` when it is the
    /// system's. This is the value given, not the kernel's doubled one. Setting it applies it as
    /// ``isNoDelayEnabled``.
    public var receiveBufferSize: Int? {
        get { socket.receiveBufferSize }
        set { socket.receiveBufferSize = newValue }
    }

    /// The connection's `SO_LINGER` (see ``Options/linger``), in whole seconds. Set `.zero` before
    /// ``close()`` to reset the connection instead of closing it gracefully. Setting it applies it as
    /// ``isNoDelayEnabled``, and ``close()`` called after the setter sees it; setting `nil` turns
    /// lingering off (the system's graceful close).
    public var linger: Duration? {
        get { socket.lingerSeconds.map { .seconds($0) } }
        set {
            socket.lingerSeconds = newValue.map { wholeSeconds($0, minimum: 0) }
            if newValue == nil {
                socket.perform { fd in
                    if fd >= 0 { turnLingerOff(fd) }
                }
            }
        }
    }

    /// Bytes of the writes called so far that the kernel has not taken yet (a snapshot, safe from any
    /// task): how far the peer is behind.
    public var queuedWriteBytes: Int { socket.queuedWriteBytes }
}

/// `SO_LINGER` off on `fd`, the system's graceful close; a failure is ignored.
private func turnLingerOff(_ fd: Int32) {
    var off = linger(l_onoff: 0, l_linger: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, socklen_t(MemoryLayout<linger>.size))
}

/// `duration` in whole seconds, rounded up, and at least `minimum`.
func wholeSeconds(_ duration: Duration, minimum: Int) -> Int {
    let (seconds, attoseconds) = duration.components
    let whole = attoseconds > 0 ? seconds + 1 : seconds
    return max(minimum, Int(clamping: whole))
}
