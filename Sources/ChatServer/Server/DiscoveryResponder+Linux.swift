import AsyncSocket
#if os(Linux)
    import Glibc
#endif

extension DiscoveryResponder {
    /// Makes the socket receive only the groups it joined itself. Linux delivers a datagram for a group
    /// to every socket bound to the group's address and port once any socket of the host joined the
    /// group on the interface it came in by (`IP_MULTICAST_ALL`, on by default); without this, a server
    /// joined on loopback would hear the LAN's queries as soon as another server on the host joined on
    /// the LAN interface. Elsewhere the kernel already filters by the socket's own memberships.
    static func receiveOnlyOwnMemberships(_ socket: UDPSocket) {
        #if os(Linux)
            socket.perform { descriptors in
                guard descriptors.socket4FD >= 0 else { return }
                var off: Int32 = 0
                // IP_MULTICAST_ALL is 49 in <linux/in.h>, which Glibc's module does not export.
                _ = setsockopt(descriptors.socket4FD, Int32(IPPROTO_IP), 49, &off, socklen_t(MemoryLayout<Int32>.size))
            }
        #endif
    }
}
