import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPSocket {
    /// Listens on every interface on `port` (0 = a free port the kernel picks; read it back from
    /// ``localPort``), IPv4 and IPv6 through one dual-stack socket where the system has IPv6
    /// (GCDAsyncSocket's `acceptOnPort:error:`). Each accepted connection arrives as a new socket in
    /// ``TCPSocketDelegate/socket(_:didAcceptNewSocket:)``.
    ///
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is in use or has no delegate;
    ///   ``SocketError/posix(operation:errno:)`` from `socket`, `bind` (`EADDRINUSE`) or `listen`.
    public func accept(onPort port: UInt16) throws(SocketError) {
        try accept(onInterface: nil, port: port)
    }

    /// Listens on `interface` (a numeric address such as `"127.0.0.1"` or `"::1"`, or a host name such
    /// as `"localhost"`, which listens on each of its addresses) or on every interface when `nil`.
    ///
    /// - Parameters:
    ///   - port: 0 = a free port the kernel picks, the same one for every address of the interface.
    ///   - backlog: the `listen(2)` backlog: connections the kernel completes before they are accepted.
    /// - Throws: as ``accept(onPort:)``, plus ``SocketError/hostLookupFailed(host:code:)``.
    public func accept(onInterface interface: String?, port: UInt16, backlog: Int32 = 1024) throws(SocketError) {
        try claim(for: .listening, verb: "accept")
        let descriptors: [Int32]
        do {
            descriptors = try openListeners(interface: interface, port: port, backlog: backlog)
        } catch {
            shared.withLock { $0.state = .disconnected }
            throw error
        }
        let local = descriptors.first.flatMap { SocketAddress.read($0, getsockname) }
        shared.withLock { $0.localAddress = local }
        onLoop { [self] in
            state = .listening
            do throws(SocketError) {
                for descriptor in descriptors {
                    let listener = Listener(fd: descriptor, owner: self)
                    listeners.append(listener)
                    try eventLoop.register(descriptor, handler: listener, interest: [.read])
                }
            } catch {
                for descriptor in descriptors where !listeners.contains(where: { $0.fd == descriptor }) {
                    Posix.close(descriptor)
                }
                close(error: error)
            }
        }
    }

    /// Creates, binds and starts listening on one socket per address; all share the first one's port.
    private func openListeners(interface: String?, port: UInt16, backlog: Int32) throws(SocketError) -> [Int32] {
        var opened: [Int32] = []
        do {
            if let interface {
                var boundPort = port
                let addresses = try Resolver.resolve(host: interface, port: port, passive: true)
                for address in addresses {
                    guard let target = SocketAddress(ipAddress: address.host, port: boundPort) else { continue }
                    let descriptor = try openListener(at: target, dualStack: false, backlog: backlog)
                    opened.append(descriptor)
                    if boundPort == 0 { boundPort = SocketAddress.read(descriptor, getsockname)?.port ?? 0 }
                }
            } else {
                // One dual-stack IPv6 socket serves IPv4 too; without IPv6, IPv4 alone.
                do {
                    opened.append(try openListener(at: .any(.inet6, port: port), dualStack: true, backlog: backlog))
                } catch where error.errno == EAFNOSUPPORT {
                    opened.append(try openListener(at: .any(.inet, port: port), dualStack: false, backlog: backlog))
                }
            }
        } catch {
            opened.forEach(Posix.close)
            throw error
        }
        return opened
    }

    private func openListener(at address: SocketAddress, dualStack: Bool, backlog: Int32) throws(SocketError) -> Int32 {
        let domain = address.family == .inet6 ? AF_INET6 : AF_INET
        let descriptor = try Posix.check("socket") { socket(domain, cass_sock_stream_nonblock(), 0) }
        do {
            try Posix.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            if address.family == .inet6 {
                try Posix.setOption(descriptor, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: dualStack ? 0 : 1)
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

    /// Accepts the connections waiting on `listenFD`, at most `Listener.acceptsPerEvent` per call.
    func acceptConnections(on listener: Listener) {
        let inherited = shared.withLock { $0 }
        for _ in 0..<Listener.acceptsPerEvent {
            guard state == .listening else { return }
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    cass_accept4(listener.fd, $0, &peerLength, cass_accept_flags())
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
            let loop = group.next()
            // The address accept(2) returned stays known even if the peer resets at once.
            let remote = withUnsafePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: peerLength) }
            }
            let socket = TCPSocket(accepted: accepted, remote: remote, on: loop, group: group, inheriting: inherited)
            do {
                try socket.applyNoDelay(accepted)
            } catch {
                // The option failing means the descriptor is unusable; drop the connection.
                Posix.close(accepted)
                continue
            }
            // The new socket starts reading only after the delegate has seen it, so no event for it can
            // reach a delegate that has not set it up (user data, its own delegate) yet.
            let (delegate, queue) = shared.withLock { ($0.delegate, $0.delegateQueue) }
            guard let delegate else {
                Posix.close(accepted)
                continue
            }
            let announce = UnsafeTransfer {
                delegate.socket(self, didAcceptNewSocket: socket)
                socket.onLoop { socket.startAccepted() }
            }
            if let queue { queue.async { announce.value() } } else { announce.value() }
        }
    }

    /// Registers an accepted connection with its loop, once the delegate has been told of it.
    func startAccepted() {
        guard state == .connected else { return }
        do {
            try eventLoop.register(fd, handler: self, interest: [])
            // Requests queued before registration may have computed an interest the loop never saw.
            interest = []
            updateInterest()
        } catch {
            close(error: error)
        }
    }
}

/// One listening descriptor of a ``TCPSocket``; hands readiness to its owner.
final class Listener: Selectable, @unchecked Sendable {
    let fd: Int32
    unowned let owner: TCPSocket
    private var resume: Scheduled?

    /// Connections accepted per readiness event, so one busy listener cannot starve the loop.
    static let acceptsPerEvent = 64

    init(fd: Int32, owner: TCPSocket) {
        self.fd = fd
        self.owner = owner
    }

    func selectorReadable() { owner.acceptConnections(on: self) }
    func selectorWritable() {}

    func pause(for delay: Duration, on loop: EventLoop) {
        try? loop.setInterest(fd, [])
        resume = loop.scheduleTask(in: delay) { [self] in try? loop.setInterest(fd, [.read]) }
    }

    func close() {
        resume?.cancel()
        owner.eventLoop.deregister(fd)
        Posix.close(fd)
    }
}
