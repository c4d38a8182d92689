import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UDPSocket {
    /// Binds to `port` on every interface (GCDAsyncUdpSocket's `bindToPort:error:`): an IPv4 and an IPv6
    /// descriptor, as enabled, sharing the port (the IPv6 one is `IPV6_V6ONLY`). Port 0 lets the kernel
    /// pick one; read it from ``localPort``, ``localPortIPv4`` or ``localPortIPv6``. A socket binds once,
    /// and not after it connected or sent (which bind it implicitly); it may connect after binding.
    ///
    /// - Throws: ``SocketError/badConfig(_:)`` when already bound, connected or closing, or with both
    ///   families disabled; ``SocketError/addressInUse(operation:errno:)`` and the other errors of
    ///   `socket`, `setsockopt` and `bind`.
    public func bind(toPort port: UInt16) throws(SocketError) {
        try bind(toPort: port, interface: nil)
    }

    /// Binds to `port` on `interface` (GCDAsyncUdpSocket's `bindToPort:interface:error:`): a name (`"lo"`,
    /// `"eth0"`), one of its addresses (`"127.0.0.1"`, `"::1"`), or `"localhost"` / `"loopback"` to
    /// receive only from this machine; `nil` means every interface. One descriptor per enabled family
    /// the interface has an address of.
    ///
    /// - Throws: as ``bind(toPort:)``, plus ``SocketError/badParam(_:)`` for an unknown interface.
    public func bind(toPort port: UInt16, interface: String?) throws(SocketError) {
        let options = shared.withLock { $0.options }
        var addresses: [SocketAddress]
        if let interface {
            addresses = try InterfaceAddresses.resolve(interface, port: port)
        } else {
            addresses = [.any(.inet, port: port), .any(.inet6, port: port)]
        }
        addresses = addresses.filter { $0.family == .inet ? options.isIPv4Enabled : ($0.family == .inet6 && options.isIPv6Enabled) }
        // One address per family: the first.
        var perFamily: [SocketAddress] = []
        for address in addresses where !perFamily.contains(where: { $0.family == address.family }) { perFamily.append(address) }
        guard !perFamily.isEmpty else {
            throw SocketError.badConfig("no address of an enabled family on interface \(interface ?? "(any)")")
        }
        try bind(toAddresses: perFamily)
    }

    /// Binds to one local address (GCDAsyncUdpSocket's `bindToAddress:error:`): one descriptor of its family.
    /// - Throws: as ``bind(toPort:)``; ``SocketError/badConfig(_:)`` when its family is disabled.
    public func bind(to address: SocketAddress) throws(SocketError) {
        let options = shared.withLock { $0.options }
        guard address.family == .inet ? options.isIPv4Enabled : (address.family == .inet6 && options.isIPv6Enabled) else {
            throw SocketError.badConfig("cannot bind to \(address): its family is disabled or not IP")
        }
        try bind(toAddresses: [address])
    }

    /// Binds to the `sockaddr` in `address` (GCDAsyncUdpSocket's `bindToAddress:error:` with `NSData`).
    /// - Throws: ``SocketError/badParam(_:)`` when the bytes are not an IPv4 or IPv6 `sockaddr`; as ``bind(to:)``.
    public func bind(toAddress address: Data) throws(SocketError) {
        guard let parsed = SocketAddress(sockaddr: address) else { throw SocketError.badParam("not a sockaddr") }
        try bind(to: parsed)
    }

    private func bind(toAddresses addresses: [SocketAddress]) throws(SocketError) {
        try onLoopAndWait { [self] () throws(SocketError) in
            let state = shared.withLock { ($0.isBound, $0.connectStage, $0.closingAfterSends) }
            guard !state.0 else { throw SocketError.badConfig("Cannot bind a socket more than once.") }
            guard state.1 == .none else { throw SocketError.badConfig("Cannot bind after connecting.") }
            guard !state.2 else { throw SocketError.disconnecting }
            closeChannels()
            let pickPort = addresses[0].port == 0
            var lastError: SocketError?
            for _ in 0..<(pickPort ? 5 : 1) {
                do throws(SocketError) {
                    var port = addresses[0].port
                    for address in addresses {
                        let channel = try openChannel(address.family)
                        try address.withPort(port).withSockAddr { pointer, length throws(SocketError) in
                            _ = try Posix.check("bind") { CAsyncSocketShims.bind(channel.fd, pointer, length) }
                        }
                        if port == 0 { port = SocketAddress.read(channel.fd, getsockname)?.port ?? 0 }
                    }
                    didBind()
                    return
                } catch {
                    closeChannels()
                    lastError = error
                    guard pickPort, error.errno == EADDRINUSE else { break }
                }
            }
            throw lastError ?? .badParam("nothing to bind to")
        }
    }

    /// Marks the socket bound and publishes its local addresses. Loop thread only.
    func didBind() {
        refreshLocalAddresses()
        shared.withLock { $0.isBound = true }
        updateInterest()
    }

    /// Reads the descriptors' local addresses (`getsockname(2)`) for the diagnostics. Loop thread only.
    func refreshLocalAddresses() {
        let local4 = channel(.inet).flatMap { SocketAddress.read($0.fd, getsockname) }
        let local6 = channel(.inet6).flatMap { SocketAddress.read($0.fd, getsockname) }
        shared.withLock {
            $0.localIPv4 = local4
            $0.localIPv6 = local6
        }
    }

    /// Makes the descriptors a send or connect needs when there are none yet: one per enabled family
    /// (GCDAsyncUdpSocket's `createSockets`). Loop thread only.
    func ensureChannels() throws(SocketError) {
        guard channels.isEmpty else { return }
        let options = shared.withLock { $0.options }
        guard options.isIPv4Enabled || options.isIPv6Enabled else {
            throw SocketError.badConfig("Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first.")
        }
        do {
            if options.isIPv4Enabled { _ = try openChannel(.inet) }
            if options.isIPv6Enabled { _ = try openChannel(.inet6) }
        } catch {
            closeChannels()
            throw error
        }
    }

    /// A new nonblocking, close-on-exec datagram descriptor of `family` with the socket's options,
    /// registered with the loop (watching nothing yet). Loop thread only.
    @discardableResult
    func openChannel(_ family: SocketAddress.Family) throws(SocketError) -> DatagramChannel {
        let domain = family == .inet6 ? AF_INET6 : AF_INET
        let fd = try Posix.check("socket") { socket(domain, cass_sock_dgram_nonblock(), 0) }
        do {
            #if !os(Linux)
                try Posix.setNonBlocking(fd)
            #endif
            if family == .inet6 { try Posix.setOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 1) }
            try applyOptions(to: fd, family: family)
            let channel = DatagramChannel(fd: fd, family: family, owner: self)
            try eventLoop.register(fd, handler: channel, interest: [])
            channels.append(channel)
            shared.withLock { $0.hasDescriptors = true }
            return channel
        } catch {
            Posix.close(fd)
            throw error
        }
    }

    /// Deregisters and closes `channel`. Loop thread only.
    func closeChannel(_ channel: DatagramChannel) {
        eventLoop.deregister(channel.fd)
        Posix.close(channel.fd)
        channels.removeAll { $0 === channel }
        if channels.isEmpty { shared.withLock { $0.hasDescriptors = false } }
    }

    /// Closes every descriptor. Loop thread only.
    func closeChannels() {
        for channel in channels { closeChannel(channel) }
    }
}
