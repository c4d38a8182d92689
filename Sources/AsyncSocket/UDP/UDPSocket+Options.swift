import CAsyncSocketShims
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UDPSocket {
    /// Which family a name that resolves to both is used with (GCDAsyncUdpSocket's `setPreferIPv4`,
    /// `setPreferIPv6`, `setIPVersionNeutral`).
    public enum IPVersionPreference: Sendable, Equatable {
        /// The first address of an enabled family in `getaddrinfo(3)`'s order (the default, as in
        /// GCDAsyncUdpSocket since Mac OS X 10.7 / iOS 5).
        case neutral
        /// The first IPv4 address, else the first IPv6 one.
        case ipv4
        /// The first IPv6 address, else the first IPv4 one.
        case ipv6
    }

    /// Every setting of a socket, applied to each descriptor it makes.
    struct Options: Sendable {
        var isIPv4Enabled = true
        var isIPv6Enabled = true
        var preference = IPVersionPreference.neutral
        var maxReceiveIPv4BufferSize: UInt16 = 65535
        var maxReceiveIPv6BufferSize: UInt32 = 65535
        var maxSendBufferSize: UInt16 = 65535
        var isReusePortEnabled = false
        var isReuseAddressEnabled = false
        var isBroadcastEnabled = false
        /// `IP_MULTICAST_IF`: the local IPv4 address multicast goes out from.
        var multicastInterfaceIPv4: in_addr?
        /// `IPV6_MULTICAST_IF`: the interface index IPv6 multicast goes out on.
        var multicastInterfaceIPv6: UInt32?
        var multicastLoop: Bool?
        var multicastTTL: UInt8?
        var multicastHopLimit: Int32?
    }

    private func get<Value>(_ keyPath: KeyPath<Options, Value>) -> Value {
        shared.withLock { $0.options[keyPath: keyPath] }
    }

    private func set<Value>(_ keyPath: WritableKeyPath<Options, Value>, _ value: Value) {
        shared.withLock { $0.options[keyPath: keyPath] = value }
    }

    /// Whether the socket uses IPv4 (GCDAsyncUdpSocket's `IPv4Enabled`). Default true. Takes effect
    /// for descriptors made later (by a bind, a connect or the first send).
    public var isIPv4Enabled: Bool {
        get { get(\.isIPv4Enabled) }
        set { set(\.isIPv4Enabled, newValue) }
    }

    /// Whether the socket uses IPv6 (GCDAsyncUdpSocket's `IPv6Enabled`). Default true.
    public var isIPv6Enabled: Bool {
        get { get(\.isIPv6Enabled) }
        set { set(\.isIPv6Enabled, newValue) }
    }

    /// The family used for a name that resolves to both (sends to a host, connects). Default ``IPVersionPreference/neutral``.
    public var ipVersionPreference: IPVersionPreference {
        get { get(\.preference) }
        set { set(\.preference, newValue) }
    }

    /// True when IPv4 is preferred (GCDAsyncUdpSocket's `isIPv4Preferred`).
    public var isIPv4Preferred: Bool { ipVersionPreference == .ipv4 }
    /// True when IPv6 is preferred (GCDAsyncUdpSocket's `isIPv6Preferred`).
    public var isIPv6Preferred: Bool { ipVersionPreference == .ipv6 }
    /// True when neither family is preferred (GCDAsyncUdpSocket's `isIPVersionNeutral`).
    public var isIPVersionNeutral: Bool { ipVersionPreference == .neutral }
    /// Prefers IPv4 (GCDAsyncUdpSocket's `setPreferIPv4`).
    public func setPreferIPv4() { ipVersionPreference = .ipv4 }
    /// Prefers IPv6 (GCDAsyncUdpSocket's `setPreferIPv6`).
    public func setPreferIPv6() { ipVersionPreference = .ipv6 }
    /// Prefers neither family (GCDAsyncUdpSocket's `setIPVersionNeutral`).
    public func setIPVersionNeutral() { ipVersionPreference = .neutral }

    /// The largest IPv4 datagram received whole, in bytes (GCDAsyncUdpSocket's `maxReceiveIPv4BufferSize`).
    /// Default 65,535 (`UINT16_MAX`, the most an IPv4 UDP datagram can hold, as in GCDAsyncUdpSocket).
    /// A longer datagram is reported as ``SocketError/datagramTruncated(size:maxReceiveSize:)`` and
    /// discarded. No memory is held per socket for it: datagrams land in the loop's shared receive buffer.
    public var maxReceiveIPv4BufferSize: UInt16 {
        get { get(\.maxReceiveIPv4BufferSize) }
        set { set(\.maxReceiveIPv4BufferSize, newValue) }
    }

    /// The largest IPv6 datagram received whole, in bytes (GCDAsyncUdpSocket's `maxReceiveIPv6BufferSize`).
    /// Default 65,535. Values over 256 KiB act as 256 KiB (and take fewer datagrams per `recvmmsg(2)`):
    /// only IPv6 jumbograms, which loopback and Ethernet never carry, are longer.
    public var maxReceiveIPv6BufferSize: UInt32 {
        get { get(\.maxReceiveIPv6BufferSize) }
        set { set(\.maxReceiveIPv6BufferSize, newValue) }
    }

    /// The largest datagram a send may queue, in bytes (GCDAsyncUdpSocket's `maxSendBufferSize`);
    /// longer ones fail with ``SocketError/datagramTooLarge(size:maxSendSize:)`` without reaching the
    /// kernel. Default 65,535. The kernel's own limit (65,507 bytes of IPv4 payload) fails a send with
    /// ``SocketError/messageTooLarge(operation:errno:)``.
    public var maxSendBufferSize: UInt16 {
        get { get(\.maxSendBufferSize) }
        set { set(\.maxSendBufferSize, newValue) }
    }

    /// Sets `SO_REUSEPORT` (socket(7)) on the socket's descriptors, now and later (GCDAsyncUdpSocket's
    /// `enableReusePort:error:`): several sockets, each with it set, may bind the same address and port;
    /// the kernel spreads unicast datagrams over them and gives each a copy of multicast and broadcast
    /// ones. Set it before binding.
    /// - Throws: ``SocketError/posix(operation:errno:)`` from `setsockopt` on an existing descriptor.
    public func enableReusePort(_ flag: Bool) throws(SocketError) {
        try setAndApply(\.isReusePortEnabled, flag)
    }

    /// Sets `SO_REUSEADDR` (socket(7)) on the socket's descriptors, now and later: for UDP, lets
    /// several sockets bind one multicast group's port. Set it before binding.
    /// - Throws: as ``enableReusePort(_:)``.
    public func enableReuseAddress(_ flag: Bool) throws(SocketError) {
        try setAndApply(\.isReuseAddressEnabled, flag)
    }

    /// Sets `SO_BROADCAST` (socket(7)) on the socket's descriptors, now and later (GCDAsyncUdpSocket's
    /// `enableBroadcast:error:`), allowing sends to a broadcast address (a subnet's, such as
    /// `127.255.255.255`, which stays on the machine); without it such sends fail with `EACCES`. The
    /// limited broadcast address (all ones) leaves the machine on every interface: tests and
    /// benchmarks broadcast to `127.255.255.255` only.
    /// - Throws: as ``enableReusePort(_:)``.
    public func enableBroadcast(_ flag: Bool) throws(SocketError) {
        try setAndApply(\.isBroadcastEnabled, flag)
    }

    /// Stores an option and applies it to the existing descriptors on the loop.
    func setAndApply<Value: Sendable>(_ keyPath: WritableKeyPath<Options, Value> & Sendable, _ value: Value) throws(SocketError) {
        shared.withLock { $0.options[keyPath: keyPath] = value }
        try onLoopAndWait { [self] () throws(SocketError) in
            for channel in channels { try applyOptions(to: channel.fd, family: channel.family) }
        }
    }

    /// Sets every option of the socket on `fd`, a descriptor of `family`.
    func applyOptions(to fd: Int32, family: SocketAddress.Family) throws(SocketError) {
        let options = shared.withLock { $0.options }
        try Posix.setOption(fd, level: SOL_SOCKET, name: SO_REUSEPORT, value: options.isReusePortEnabled ? 1 : 0)
        try Posix.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: options.isReuseAddressEnabled ? 1 : 0)
        try Posix.setOption(fd, level: SOL_SOCKET, name: SO_BROADCAST, value: options.isBroadcastEnabled ? 1 : 0)
        #if canImport(Darwin)
            try Posix.setOption(fd, level: SOL_SOCKET, name: SO_NOSIGPIPE, value: 1)
        #endif
        switch family {
        case .inet:
            if var interface = options.multicastInterfaceIPv4 {
                _ = try Posix.check("setsockopt") {
                    setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &interface, socklen_t(MemoryLayout<in_addr>.size))
                }
            }
            if let loop = options.multicastLoop {
                try Posix.setOption(fd, level: Int32(IPPROTO_IP), name: IP_MULTICAST_LOOP, value: loop ? 1 : 0)
            }
            if let ttl = options.multicastTTL {
                try Posix.setOption(fd, level: Int32(IPPROTO_IP), name: IP_MULTICAST_TTL, value: Int32(ttl))
            }
        case .inet6:
            if let index = options.multicastInterfaceIPv6 {
                try Posix.setOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_MULTICAST_IF, value: Int32(bitPattern: index))
            }
            if let loop = options.multicastLoop {
                try Posix.setOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_MULTICAST_LOOP, value: loop ? 1 : 0)
            }
            if let hops = options.multicastHopLimit {
                try Posix.setOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_MULTICAST_HOPS, value: hops)
            }
        case .unix:
            break
        }
    }
}
