import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UDPSocket {
    /// Joins the multicast group `group` (a numeric address, `"239.255.0.1"` or `"ff02::1234"`) on
    /// `interface` (GCDAsyncUdpSocket's `joinMulticastGroup:onInterface:error:`): `IP_ADD_MEMBERSHIP` on
    /// the IPv4 descriptor or `IPV6_JOIN_GROUP` on the IPv6 one. `interface` is a name (`"lo"`, `"eth0"`)
    /// or one of its addresses (`"127.0.0.1"`); `nil` lets the kernel choose by its routes. Bind first,
    /// to the group's port.
    ///
    /// - Throws: ``SocketError/badConfig(_:)`` when the socket is not bound or has no descriptor of the
    ///   group's family; ``SocketError/badParam(_:)`` when `group` is not a numeric address or the
    ///   interface is unknown; ``SocketError/posix(operation:errno:)`` (or another case with an errno)
    ///   from `setsockopt`, for example `EADDRINUSE` when already a member.
    public func joinMulticastGroup(_ group: String, onInterface interface: String? = nil) throws(SocketError) {
        try changeMembership(group, interface: interface, join: true)
    }

    /// Leaves the multicast group `group` on `interface` (GCDAsyncUdpSocket's
    /// `leaveMulticastGroup:onInterface:error:`): `IP_DROP_MEMBERSHIP` / `IPV6_LEAVE_GROUP`.
    ///
    /// - Throws: as ``joinMulticastGroup(_:onInterface:)``; `EADDRNOTAVAIL` (as
    ///   ``SocketError/addressNotAvailable(operation:errno:)``) when not a member.
    public func leaveMulticastGroup(_ group: String, onInterface interface: String? = nil) throws(SocketError) {
        try changeMembership(group, interface: interface, join: false)
    }

    /// Sends IPv4 multicast from the interface with the local address (or name) `interface`
    /// (GCDAsyncUdpSocket's `sendIPv4MulticastOnInterface:error:`, `IP_MULTICAST_IF`), now and for
    /// descriptors made later.
    /// - Throws: ``SocketError/badParam(_:)`` for an interface with no IPv4 address; errors of `setsockopt`.
    public func sendIPv4Multicast(onInterface interface: String) throws(SocketError) {
        guard let address = try InterfaceAddresses.resolve(interface, port: 0).first(where: { $0.family == .inet }) else {
            throw SocketError.badParam("interface \(interface) has no IPv4 address")
        }
        try setAndApply(\.multicastInterfaceIPv4, address.ipv4Address)
    }

    /// Sends IPv6 multicast on the interface named `interface` (`"lo"`, `"eth0"`) or holding that address
    /// (GCDAsyncUdpSocket's `sendIPv6MulticastOnInterface:error:`, `IPV6_MULTICAST_IF`).
    /// - Throws: ``SocketError/badParam(_:)`` for an unknown interface; errors of `setsockopt`.
    public func sendIPv6Multicast(onInterface interface: String) throws(SocketError) {
        try setAndApply(\.multicastInterfaceIPv6, try Self.interfaceIndex(interface))
    }

    /// Whether multicast this socket sends is delivered to its own host's members too
    /// (`IP_MULTICAST_LOOP` and `IPV6_MULTICAST_LOOP`; the kernel's default is on).
    /// - Throws: errors of `setsockopt` on an existing descriptor.
    public func enableMulticastLoop(_ flag: Bool) throws(SocketError) {
        try setAndApply(\.multicastLoop, flag)
    }

    /// The IPv4 multicast time to live, in router hops (`IP_MULTICAST_TTL`; the kernel's default is 1,
    /// the local network; 0 keeps datagrams on this host).
    /// - Throws: errors of `setsockopt` on an existing descriptor.
    public func setMulticastTTL(_ ttl: UInt8) throws(SocketError) {
        try setAndApply(\.multicastTTL, ttl)
    }

    /// The IPv6 multicast hop limit (`IPV6_MULTICAST_HOPS`, 0…255; the kernel's default is 1).
    /// - Throws: ``SocketError/badParam(_:)`` outside 0…255; errors of `setsockopt`.
    public func setMulticastHopLimit(_ hops: Int) throws(SocketError) {
        guard (0...255).contains(hops) else { throw SocketError.badParam("a hop limit is 0...255, not \(hops)") }
        try setAndApply(\.multicastHopLimit, Int32(hops))
    }

    private func changeMembership(_ group: String, interface: String?, join: Bool) throws(SocketError) {
        guard let groupAddress = SocketAddress(ipAddress: group, port: 0) else {
            throw SocketError.badParam("not a numeric multicast group address: \(group)")
        }
        let interfaceIPv4: in_addr
        var index: UInt32 = 0
        if groupAddress.family == .inet {
            if let interface {
                guard let local = try InterfaceAddresses.resolve(interface, port: 0).first(where: { $0.family == .inet }) else {
                    throw SocketError.badParam("interface \(interface) has no IPv4 address")
                }
                interfaceIPv4 = local.ipv4Address
            } else {
                interfaceIPv4 = in_addr(s_addr: 0)
            }
        } else {
            interfaceIPv4 = in_addr(s_addr: 0)
            if let interface { index = try Self.interfaceIndex(interface) }
        }
        let interfaceIndex = index
        try onLoopAndWait { [self] () throws(SocketError) in
            guard shared.withLock({ $0.isBound }) else {
                throw SocketError.badConfig("Must bind a socket before joining a multicast group.")
            }
            guard let channel = channel(groupAddress.family) else {
                throw SocketError.badConfig(
                    "the socket has no \(groupAddress.family == .inet ? "IPv4" : "IPv6") descriptor for group \(group)")
            }
            let fd = channel.fd
            if groupAddress.family == .inet {
                var request = ip_mreq(imr_multiaddr: groupAddress.ipv4Address, imr_interface: interfaceIPv4)
                _ = try Posix.check("setsockopt") {
                    setsockopt(
                        fd, Int32(IPPROTO_IP), join ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP, &request,
                        socklen_t(MemoryLayout<ip_mreq>.size))
                }
            } else {
                var request = ipv6_mreq()
                request.ipv6mr_multiaddr = groupAddress.ipv6Address
                request.ipv6mr_interface = interfaceIndex
                _ = try Posix.check("setsockopt") {
                    setsockopt(
                        fd, Int32(IPPROTO_IPV6), join ? IPV6_ADD_MEMBERSHIP : IPV6_DROP_MEMBERSHIP, &request,
                        socklen_t(MemoryLayout<ipv6_mreq>.size))
                }
            }
        }
    }

    /// The index of the interface named `interface`, or of the one holding the address `interface`.
    static func interfaceIndex(_ interface: String) throws(SocketError) -> UInt32 {
        let index = if_nametoindex(interface)
        if index != 0 { return index }
        if let address = SocketAddress(ipAddress: interface, port: 0) {
            var list: UnsafeMutablePointer<ifaddrs>?
            guard getifaddrs(&list) == 0 else { throw SocketError.badParam("unknown interface \(interface)") }
            defer { freeifaddrs(list) }
            var cursor = list
            while let entry = cursor {
                cursor = entry.pointee.ifa_next
                guard let raw = entry.pointee.ifa_addr else { continue }
                let family = Int32(raw.pointee.sa_family)
                guard family == AF_INET || family == AF_INET6 else { continue }
                let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
                if SocketAddress(raw, length: length)?.host == address.host {
                    return if_nametoindex(entry.pointee.ifa_name)
                }
            }
        }
        throw SocketError.badParam("unknown interface \(interface)")
    }
}

extension SocketAddress {
    /// The IPv4 address (`sin_addr`, network byte order); zero for other families.
    var ipv4Address: in_addr {
        guard family == .inet else { return in_addr(s_addr: 0) }
        return withSockAddr { pointer, _ in
            UnsafeRawPointer(pointer).load(as: sockaddr_in.self).sin_addr
        }
    }

    /// The IPv6 address (`sin6_addr`); all zero for other families.
    var ipv6Address: in6_addr {
        guard family == .inet6 else { return in6_addr() }
        return withSockAddr { pointer, _ in
            UnsafeRawPointer(pointer).load(as: sockaddr_in6.self).sin6_addr
        }
    }
}
