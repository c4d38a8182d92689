import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TCPSocket {
    /// Listens on every interface on `port` (GCDAsyncSocket's `acceptOnPort:error:`): an IPv4 and an
    /// IPv6 listening socket (as enabled), sharing one port; with port 0 the kernel picks it (read it
    /// back from ``localPort``). Each accepted connection arrives as a new socket in
    /// ``TCPSocketDelegate/socket(_:didAcceptNewSocket:)``.
    ///
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is in use or has no delegate;
    ///   ``SocketError/addressInUse(operation:errno:)`` from `bind`; ``SocketError/posix(operation:errno:)``
    ///   (or another case with an `errno`) from `socket`, `bind` or `listen`.
    public func accept(onPort port: UInt16) throws(SocketError) {
        try accept(onInterface: nil, port: port)
    }

    /// Listens on `interface`: an interface name (`"lo"`, `"eth0"`), a numeric address (`"127.0.0.1"`,
    /// `"::1"`), `"localhost"` / `"loopback"`, or a host name, each listening on every IPv4 and IPv6
    /// address it has (as enabled); `nil` means every interface. All the listening sockets share one
    /// port (IPv6 ones set `IPV6_V6ONLY`).
    ///
    /// - Parameters:
    ///   - interface: where to listen, as above; `nil` for every interface.
    ///   - port: the TCP port in host byte order; 0 = a free port the kernel picks, the same one for every address.
    ///   - backlog: the `listen(2)` backlog: connections the kernel completes before they are accepted.
    /// - Throws: as ``accept(onPort:)``, plus ``SocketError/badParam(_:)`` for an unknown interface.
    public func accept(onInterface interface: String?, port: UInt16, backlog: Int32 = 1024) throws(SocketError) {
        try claim(for: .listening, verb: "accept")
        let options = shared.withLock { $0.options }
        do throws(SocketError) {
            var addresses: [SocketAddress]
            if let interface {
                addresses = try InterfaceAddresses.resolve(interface, port: port)
            } else {
                addresses = [.any(.inet, port: port), .any(.inet6, port: port)]
            }
            addresses = addresses.filter { $0.family == .inet ? options.isIPv4Enabled : options.isIPv6Enabled }
            guard !addresses.isEmpty else {
                throw SocketError.badConfig("no address of an enabled family on interface \(interface ?? "(any)")")
            }
            try startListening(try openListeners(at: addresses, backlog: backlog, options: options))
        } catch {
            shared.withLock { $0.state = .disconnected }
            throw error
        }
    }

    /// Listens on the Unix-domain socket at the file URL `url` (GCDAsyncSocket's `acceptOnUrl:error:`).
    /// A stale socket file at that path is removed first; any other kind of file is left alone and the
    /// bind fails with ``SocketError/addressInUse(operation:errno:)``.
    ///
    /// - Throws: ``SocketError/badParam(_:)`` for a URL that is not a usable path; otherwise as
    ///   ``accept(onPort:)``.
    public func accept(onUrl url: URL, backlog: Int32 = 1024) throws(SocketError) {
        guard url.isFileURL, let address = SocketAddress(unixDomainSocketPath: url.path) else {
            throw SocketError.badParam("not a usable Unix-domain socket path: \(url)")
        }
        try claim(for: .listening, verb: "accept")
        do throws(SocketError) {
            var status = stat()
            if lstat(url.path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK { unlink(url.path) }
            try startListening([try openListener(at: address, backlog: backlog, options: Options())])
        } catch {
            shared.withLock { $0.state = .disconnected }
            throw error
        }
    }

    private func startListening(_ descriptors: [Int32]) throws(SocketError) {
        let local = descriptors.first.flatMap { SocketAddress.read($0, getsockname) }
        shared.withLock { $0.localAddress = local }
        onLoop { [self] in
            let acceptor = Acceptor(owner: self)
            lifecycle = .listening(acceptor)
            loopOptions = shared.withLock { $0.optionsBox }
            for (index, descriptor) in descriptors.enumerated() {
                let listener = Listener(fd: descriptor, acceptor: acceptor)
                do throws(SocketError) {
                    try eventLoop.register(descriptor, handler: listener, interest: [.read])
                    acceptor.listeners.append(listener)
                } catch {
                    descriptors[index...].forEach(Posix.close)
                    close(error: error)
                    return
                }
            }
        }
    }

    /// Binds every address to one port (the first one's when asked for port 0), retrying a few times
    /// when the kernel's pick for the first is taken for a later one.
    private func openListeners(at addresses: [SocketAddress], backlog: Int32, options: Options) throws(SocketError) -> [Int32] {
        let pickPort = addresses.first?.port == 0
        var lastError: SocketError?
        for _ in 0..<(pickPort ? 5 : 1) {
            var opened: [Int32] = []
            do {
                var port = addresses[0].port
                for address in addresses {
                    let descriptor = try openListener(at: address.withPort(port), backlog: backlog, options: options)
                    opened.append(descriptor)
                    if port == 0 { port = SocketAddress.read(descriptor, getsockname)?.port ?? 0 }
                }
                return opened
            } catch {
                opened.forEach(Posix.close)
                lastError = error
                guard pickPort, error.errno == EADDRINUSE else { break }
            }
        }
        throw lastError ?? .badParam("nothing to listen on")
    }

    private func openListener(at address: SocketAddress, backlog: Int32, options: Options) throws(SocketError) -> Int32 {
        let descriptor = try Posix.check("socket") { socket(address.domain, cass_sock_stream_nonblock(), 0) }
        do {
            #if !os(Linux)
                try Posix.setNonBlocking(descriptor)
            #endif
            if address.family != .unix {
                try Posix.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
                if options.isReusePortEnabled {
                    try Posix.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEPORT, value: 1)
                }
            }
            if address.family == .inet6 {
                try Posix.setOption(descriptor, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 1)
            }
            if let size = options.receiveBufferSize {
                // Accepted sockets inherit the receive buffer, which must be set before listen for window scaling.
                try Posix.setOption(descriptor, level: SOL_SOCKET, name: SO_RCVBUF, value: Int32(clamping: size))
            }
            _ = try address.withSockAddr { pointer, length throws(SocketError) in
                try Posix.check("bind") { bind(descriptor, pointer, length) }
            }
            _ = try Posix.check("listen") { listen(descriptor, backlog) }
        } catch {
            Posix.close(descriptor)
            throw error
        }
        return descriptor
    }
}

/// The listening stage of a ``TCPSocket`` (SwiftNIO's server channel, apart from its stream channels):
/// the listening descriptors, and the accepting of connections as new sockets. Loop thread only.
final class Acceptor: @unchecked Sendable {
    unowned let owner: TCPSocket
    var listeners: [Listener] = []

    init(owner: TCPSocket) {
        self.owner = owner
    }

    /// Stops listening: every listening descriptor is closed.
    func close() {
        for listener in listeners { listener.close() }
        listeners = []
    }

    /// Accepts the connections waiting on a listener, at most `Listener.acceptsPerEvent` per call.
    func acceptConnections(on listener: Listener) {
        owner.eventLoop.assertInEventLoop()
        let template = owner.shared.withLock { $0 }
        let eventLoop = owner.eventLoop
        for _ in 0..<Listener.acceptsPerEvent {
            guard case .listening(let current) = owner.lifecycle, current === self else { return }
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    eventLoop.io.accept(listener.fd, $0, &peerLength)
                }
            }
            if accepted < 0 {
                let code = cass_errno()
                switch code {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop accepting briefly rather than spin on a readable listener.
                    listener.pause(for: .milliseconds(100), on: eventLoop)
                    return
                default:
                    return
                }
            }
            // The address accept(2) returned stays known even if the peer resets at once.
            let remote = withUnsafePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: peerLength) }
            }
            let local = SocketAddress.read(accepted, getsockname)
            do {
                try owner.applyOptions(to: accepted, isUnixDomain: remote?.family == .unix || local?.family == .unix)
            } catch {
                // The options failing means the descriptor is unusable; drop the connection.
                eventLoop.io.close(accepted)
                continue
            }
            let socket = TCPSocket(
                connected: accepted, local: local, remote: remote, on: owner.group.next(), group: owner.group, like: template)
            // The new socket starts reading only after the delegate has seen it, so no event for it can
            // reach a delegate that has not set it up (user data, its own delegate) yet.
            guard let delegate = template.delegate else {
                eventLoop.io.close(accepted)
                continue
            }
            let owner = self.owner
            let announce = UnsafeTransfer {
                delegate.socket(owner, didAcceptNewSocket: socket)
                socket.onLoop { socket.startConnected() }
            }
            if let queue = template.delegateQueue { queue.async { announce.value() } } else { announce.value() }
        }
    }
}

/// One listening descriptor of an ``Acceptor``; hands readiness to it.
final class Listener: Selectable, @unchecked Sendable {
    let fd: Int32
    unowned let acceptor: Acceptor
    private var resume: Scheduled?

    /// Connections accepted per readiness event, so one busy listener cannot starve the loop.
    static let acceptsPerEvent = 64

    init(fd: Int32, acceptor: Acceptor) {
        self.fd = fd
        self.acceptor = acceptor
    }

    func selectorReadable() { acceptor.acceptConnections(on: self) }
    func selectorWritable() {}

    func pause(for delay: Duration, on loop: EventLoop) {
        try? loop.setInterest(fd, [])
        resume = loop.scheduleTask(in: delay) { [self] in try? loop.setInterest(fd, [.read]) }
    }

    /// Stops listening at once, then closes the descriptor. `shutdown(2)` first, because `close(2)`
    /// only drops this process's reference: while another copy of the descriptor lives (a child
    /// process being started holds one from `fork`/`posix_spawn` until its `exec`), the kernel would
    /// go on completing handshakes into the backlog and reset them afterwards, so a client reconnecting
    /// at once was "connected", then reset, instead of refused.
    func close() {
        resume?.cancel()
        acceptor.owner.eventLoop.deregister(fd)
        _ = shutdown(fd, Int32(SHUT_RDWR))
        Posix.close(fd)
    }
}
