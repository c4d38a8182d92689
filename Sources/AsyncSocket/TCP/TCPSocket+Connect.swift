import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TCPSocket {
    /// Connects to `host` (a name or a numeric IPv4/IPv6 address) on `port`. Returns at once; the
    /// outcome arrives as ``TCPSocketDelegate/socket(_:didConnectToHost:port:)`` or as
    /// ``TCPSocketDelegate/socketDidDisconnect(_:withError:)``. Name resolution runs on a global
    /// dispatch queue, never on the event loop. Every resolved address of an enabled family is tried,
    /// the families interleaved (the preferred one first) and each attempt given
    /// ``alternateAddressDelay`` before the next one starts alongside it; the first to connect wins
    /// (Happy Eyeballs, RFC 8305).
    ///
    /// - Parameters:
    ///   - host: a host name or a numeric IPv4/IPv6 address.
    ///   - port: the TCP port, in host byte order.
    ///   - interface: bind to this interface or local address first (`"en1"`, `"192.168.4.34"`,
    ///     `"lo:8082"`; see ``accept(onInterface:port:backlog:)``); `nil` lets the system choose.
    ///   - timeout: seconds for the whole connect, name resolution included; negative means none.
    ///     On expiry the socket disconnects with ``SocketError/connectTimeout``.
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is already connecting, connected or
    ///   listening, has no delegate, or has both IPv4 and IPv6 disabled;
    ///   ``SocketError/badParam(_:)`` for an unknown interface.
    public func connect(
        toHost host: String, onPort port: UInt16, viaInterface interface: String? = nil, withTimeout timeout: TimeInterval = -1
    ) throws(SocketError) {
        let local = try localAddresses(for: interface)
        try claim(for: .connecting, verb: "connect")
        onLoop { [self] in
            let generation = startConnecting(timeout: timeout)
            Resolver.resolveAsync(host: host, port: port) { [self] result in
                onLoop { [self] in
                    guard generation == connectGeneration, state == .connecting else { return }
                    switch result {
                    case .success(let addresses): connect(toAny: addresses, from: local)
                    case .failure(let error): close(error: error)
                    }
                }
            }
        }
    }

    /// Connects to a socket address (GCDAsyncSocket's `connectToAddress:viaInterface:withTimeout:error:`).
    ///
    /// - Parameters:
    ///   - address: the peer's IPv4 or IPv6 address and port.
    ///   - interface: as in ``connect(toHost:onPort:viaInterface:withTimeout:)``.
    ///   - timeout: seconds; negative means none.
    /// - Throws: as ``connect(toHost:onPort:viaInterface:withTimeout:)``.
    public func connect(
        to address: SocketAddress, viaInterface interface: String? = nil, withTimeout timeout: TimeInterval = -1
    ) throws(SocketError) {
        let local = try localAddresses(for: interface)
        try claim(for: .connecting, verb: "connect")
        onLoop { [self] in
            _ = startConnecting(timeout: timeout)
            connect(toAny: [address], from: local)
        }
    }

    /// Connects to the Unix-domain socket at the file URL `url` (GCDAsyncSocket's
    /// `connectToUrl:withTimeout:error:`). Success arrives as
    /// ``TCPSocketDelegate/socket(_:didConnectToUrl:)``.
    ///
    /// - Throws: ``SocketError/badParam(_:)`` when `url` is not a file URL or its path is too long;
    ///   otherwise as ``connect(toHost:onPort:viaInterface:withTimeout:)``.
    public func connect(toUrl url: URL, withTimeout timeout: TimeInterval = -1) throws(SocketError) {
        guard url.isFileURL, let address = SocketAddress(unixDomainSocketPath: url.path) else {
            throw SocketError.badParam("not a usable Unix-domain socket path: \(url)")
        }
        try claim(for: .connecting, verb: "connect")
        onLoop { [self] in
            _ = startConnecting(timeout: timeout)
            connect(toAny: [address], from: [])
        }
    }

    /// Connects to the first of `addresses` to answer, in the Happy Eyeballs order, as if a name had
    /// resolved to them (for tests of the connect logic).
    func connect(toAddresses addresses: [SocketAddress], withTimeout timeout: TimeInterval) throws(SocketError) {
        try claim(for: .connecting, verb: "connect")
        onLoop { [self] in
            _ = startConnecting(timeout: timeout)
            connect(toAny: addresses, from: [])
        }
    }

    /// The local addresses to bind to before connecting, from an interface description.
    private func localAddresses(for interface: String?) throws(SocketError) -> [SocketAddress] {
        guard let interface else { return [] }
        return try InterfaceAddresses.resolve(interface, port: 0)
    }

    /// Claims an unused socket for `newState` (connecting or listening), synchronously, so a second
    /// connect or accept fails at once.
    /// - Throws: ``SocketError/badConfig(_:)`` without a delegate, with both IP families disabled, or
    ///   when the socket is in use.
    func claim(for newState: State, verb: String) throws(SocketError) {
        // `disconnect()` from another thread closes on the loop, after it returns; GCDAsyncSocket's is
        // synchronous, so `disconnect(); connect(…)` must work. When the socket still looks in use, let
        // the loop run what is queued before it (a disconnect among it) and then decide.
        if !eventLoop.inEventLoop, shared.withLock({ $0.state != .idle && $0.state != .disconnected }) {
            eventLoop.runAndWait {}
        }
        try shared.withLock { shared throws(SocketError) in
            guard shared.delegate != nil else {
                throw SocketError.badConfig("Attempting to \(verb) without a delegate. Set a delegate first.")
            }
            guard shared.options.isIPv4Enabled || shared.options.isIPv6Enabled else {
                throw SocketError.badConfig("Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first.")
            }
            guard shared.state == .idle || shared.state == .disconnected else {
                throw SocketError.alreadyConnected
            }
            shared.state = newState
        }
    }

    /// Enters the connecting state on the loop and starts the connect timeout. Returns the attempt's
    /// generation, which a late resolver answer must match.
    private func startConnecting(timeout: TimeInterval) -> UInt64 {
        connectGeneration &+= 1
        let generation = connectGeneration
        let attempt = ConnectAttempt(generation: generation)
        // Reads and writes queued from now on wait on the new connection.
        lifecycle = .connecting(ConnectionState(), attempt)
        if timeout >= 0 {
            attempt.timer = eventLoop.scheduleTask(in: .seconds(timeout)) { [self] in
                guard generation == connectGeneration, state == .connecting else { return }
                close(error: .connectTimeout)
            }
        }
        return generation
    }

    /// Orders `addresses` for Happy Eyeballs and starts the attempts.
    private func connect(toAny addresses: [SocketAddress], from local: [SocketAddress]) {
        let options = shared.withLock { $0.options }
        let usable = addresses.filter {
            $0.family == .unix || ($0.family == .inet ? options.isIPv4Enabled : options.isIPv6Enabled)
        }
        guard !usable.isEmpty else {
            close(
                error: .badConfig(
                    "no address of an enabled family (IPv4 \(options.isIPv4Enabled ? "on" : "off"), IPv6 \(options.isIPv6Enabled ? "on" : "off"))"
                ))
            return
        }
        let ordered = ConnectionAttempts.interleave(usable, preferring: options.isIPv4PreferredOverIPv6 ? .inet : .inet6)
        guard case .connecting(_, let attempt) = lifecycle else { return }
        let attempts = ConnectionAttempts(owner: self, addresses: ordered, localAddresses: local, delay: options.alternateAddressDelay)
        attempt.attempts = attempts
        attempts.startNext()
    }

    /// An attempt connected: `socketFD` becomes this socket's connection.
    func connectionSucceeded(_ socketFD: Int32, to remote: SocketAddress) {
        guard case .connecting(let connection, let attempt) = lifecycle else {
            Posix.close(socketFD)
            return
        }
        attempt.attempts = nil  // they have stopped: this one won
        attempt.cancel()
        connection.fd = socketFD
        let local = SocketAddress.read(socketFD, getsockname)
        lifecycle = .connected(connection)
        shared.withLock {
            $0.state = .connected
            $0.localAddress = local
            $0.remoteAddress = remote
        }
        if let path = remote.path {
            emit(.connectedToUrl(URL(fileURLWithPath: path)))
        } else {
            emit(.connectedToHost(remote.host, port: remote.port))
        }
        startConnected()
    }

    /// Every attempt failed: report the last error.
    func connectionFailed(_ error: SocketError) {
        if case .connecting(_, let attempt) = lifecycle { attempt.attempts = nil }
        close(error: error)
    }
}

/// The connect attempts of one ``TCPSocket/connect(toHost:onPort:viaInterface:withTimeout:)``: the
/// addresses left to try and the attempts running. A new attempt starts when the last one fails or has
/// run for the alternate-address delay without an answer (RFC 8305, section 5). Loop thread only.
final class ConnectionAttempts: @unchecked Sendable {
    /// One nonblocking `connect(2)` in flight.
    final class Attempt: Selectable, @unchecked Sendable {
        let fd: Int32
        let address: SocketAddress
        unowned let owner: ConnectionAttempts

        init(fd: Int32, address: SocketAddress, owner: ConnectionAttempts) {
            self.fd = fd
            self.address = address
            self.owner = owner
        }

        func selectorReadable() {}
        func selectorWritable() { owner.finished(self) }
    }

    private unowned let owner: TCPSocket
    private var pending: [SocketAddress]
    private var running: [Attempt] = []
    private let localAddresses: [SocketAddress]
    private let delay: TimeInterval
    private var staggerTimer: Scheduled?
    private var lastError: SocketError?

    init(owner: TCPSocket, addresses: [SocketAddress], localAddresses: [SocketAddress], delay: TimeInterval) {
        self.owner = owner
        self.pending = addresses
        self.localAddresses = localAddresses
        self.delay = delay
    }

    /// `addresses` with the families alternating, `preferred` first (RFC 8305, section 4).
    static func interleave(_ addresses: [SocketAddress], preferring preferred: SocketAddress.Family) -> [SocketAddress] {
        var first = addresses.filter { $0.family == preferred }
        var second = addresses.filter { $0.family != preferred }
        if first.isEmpty { swap(&first, &second) }
        var result: [SocketAddress] = []
        for index in 0..<max(first.count, second.count) {
            if index < first.count { result.append(first[index]) }
            if index < second.count { result.append(second[index]) }
        }
        return result
    }

    /// Starts attempts until one is in flight; reports failure when none is left.
    func startNext() {
        staggerTimer?.cancel()
        staggerTimer = nil
        while !pending.isEmpty {
            let address = pending.removeFirst()
            do {
                let attempt = try begin(address)
                running.append(attempt)
                if !pending.isEmpty {
                    staggerTimer = owner.eventLoop.scheduleTask(in: .seconds(max(0, delay))) { [self] in startNext() }
                }
                return
            } catch {
                lastError = error
            }
        }
        if running.isEmpty { owner.connectionFailed(lastError ?? .badParam("no address to connect to")) }
    }

    private func begin(_ address: SocketAddress) throws(SocketError) -> Attempt {
        let fd = try owner.makeStreamSocket(address.family)
        do throws(SocketError) {
            if address.family != .unix && !localAddresses.isEmpty {
                guard let local = localAddresses.first(where: { $0.family == address.family }) else {
                    throw SocketError.badParam("the interface has no \(address.family == .inet ? "IPv4" : "IPv6") address for \(address)")
                }
                _ = try local.withSockAddr { pointer, length throws(SocketError) in
                    try Posix.check("bind") { bind(fd, pointer, length) }
                }
            }
            let started = address.withSockAddr { pointer, length in CAsyncSocketShims.connect(fd, pointer, length) }
            let code = started == 0 ? 0 : cass_errno()
            // Nonblocking connects finish later (EINPROGRESS; EAGAIN for Unix-domain sockets whose
            // backlog is full); either way the socket turns writable.
            guard code == 0 || code == EINPROGRESS || code == EAGAIN else {
                throw SocketError.system(operation: "connect", errno: code)
            }
            let attempt = Attempt(fd: fd, address: address, owner: self)
            try owner.eventLoop.register(fd, handler: attempt, interest: [.write])
            return attempt
        } catch {
            Posix.close(fd)
            throw error
        }
    }

    /// An attempt's descriptor turned writable: it connected or failed.
    fileprivate func finished(_ attempt: Attempt) {
        var code = (try? Posix.getOption(attempt.fd, level: SOL_SOCKET, name: SO_ERROR)) ?? EIO
        if code == 0 && Self.isConnectedToItself(attempt.fd) {
            // Closed with a reset, so the port is not held in TIME_WAIT for a server about to bind it.
            var abort = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(attempt.fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
            code = ECONNREFUSED
        }
        running.removeAll { $0 === attempt }
        owner.eventLoop.deregister(attempt.fd)
        guard code == 0 else {
            Posix.close(attempt.fd)
            lastError = .system(operation: "connect", errno: code)
            // A failure starts the next address at once rather than after the delay.
            if running.isEmpty { startNext() }
            return
        }
        cancel()
        owner.connectionSucceeded(attempt.fd, to: attempt.address)
    }

    /// True when a TCP socket's local and remote addresses are the same. A connect to a port on this
    /// host where nothing listens can pick that very port as its own (the kernel's ephemeral range
    /// includes it) and then "connect" to itself through TCP's simultaneous open (RFC 793 §3.4): no
    /// server is there, so it is reported as refused, as Go's `net` package does (`selfConnect`).
    private static func isConnectedToItself(_ fd: Int32) -> Bool {
        guard let local = SocketAddress.read(fd, getsockname), local.family != .unix,
            let remote = SocketAddress.read(fd, getpeername)
        else { return false }
        return local == remote
    }

    /// Stops every attempt still running; nothing more is reported.
    func cancel() {
        staggerTimer?.cancel()
        staggerTimer = nil
        pending = []
        for attempt in running {
            owner.eventLoop.deregister(attempt.fd)
            Posix.close(attempt.fd)
        }
        running = []
    }
}
