import Foundation

extension UDPSocket {
    /// The raw descriptors of a ``UDPSocket`` (GCDAsyncUdpSocket's `socketFD`, `socket4FD`, `socket6FD`),
    /// -1 for none.
    public struct Descriptors: Sendable, Equatable {
        /// The IPv4 descriptor.
        public var socket4FD: Int32
        /// The IPv6 descriptor.
        public var socket6FD: Int32
        /// The only descriptor when there is exactly one, else -1 (GCDAsyncUdpSocket's `socketFD`).
        public var socketFD: Int32 { socket4FD >= 0 && socket6FD >= 0 ? -1 : max(socket4FD, socket6FD) }
    }

    /// The local address: the IPv4 one when the socket has an IPv4 descriptor, else the IPv6 one
    /// (GCDAsyncUdpSocket's `localAddress`); `nil` before a bind, connect or send to an address, and
    /// after ``close()``.
    public var localAddress: SocketAddress? { shared.withLock { $0.localIPv4 ?? $0.localIPv6 } }
    /// The numeric host of ``localAddress`` (`"0.0.0.0"`, `"127.0.0.1"`, `"::"`).
    public var localHost: String? { localAddress?.host }
    /// The port of ``localAddress`` in host byte order, 0 when there is none.
    public var localPort: UInt16 { localAddress?.port ?? 0 }

    /// The IPv4 descriptor's local address (GCDAsyncUdpSocket's `localAddress_IPv4`).
    public var localAddressIPv4: SocketAddress? { shared.withLock { $0.localIPv4 } }
    /// The IPv4 descriptor's local host (GCDAsyncUdpSocket's `localHost_IPv4`).
    public var localHostIPv4: String? { localAddressIPv4?.host }
    /// The IPv4 descriptor's local port (GCDAsyncUdpSocket's `localPort_IPv4`), 0 when there is none.
    public var localPortIPv4: UInt16 { localAddressIPv4?.port ?? 0 }

    /// The IPv6 descriptor's local address (GCDAsyncUdpSocket's `localAddress_IPv6`).
    public var localAddressIPv6: SocketAddress? { shared.withLock { $0.localIPv6 } }
    /// The IPv6 descriptor's local host (GCDAsyncUdpSocket's `localHost_IPv6`).
    public var localHostIPv6: String? { localAddressIPv6?.host }
    /// The IPv6 descriptor's local port (GCDAsyncUdpSocket's `localPort_IPv6`), 0 when there is none.
    public var localPortIPv6: UInt16 { localAddressIPv6?.port ?? 0 }

    /// The peer's address while connected (GCDAsyncUdpSocket's `connectedAddress`), else `nil`.
    public var connectedAddress: SocketAddress? { shared.withLock { $0.connectStage == .connected ? $0.connectedAddress : nil } }
    /// The peer's numeric host while connected, else `nil`.
    public var connectedHost: String? { connectedAddress?.host }
    /// The peer's port while connected, else 0.
    public var connectedPort: UInt16 { connectedAddress?.port ?? 0 }

    /// True while connected to one peer (GCDAsyncUdpSocket's `isConnected`).
    public var isConnected: Bool { shared.withLock { $0.connectStage == .connected } }
    /// True while the socket has no descriptor: before its first bind, connect or send, and after
    /// ``close()`` (GCDAsyncUdpSocket's `isClosed`).
    public var isClosed: Bool { shared.withLock { !$0.hasDescriptors } }
    /// True when the socket has an IPv4 descriptor, or has none and IPv4 is enabled (GCDAsyncUdpSocket's `isIPv4`).
    public var isIPv4: Bool { family(.inet) }
    /// True when the socket has an IPv6 descriptor, or has none and IPv6 is enabled (GCDAsyncUdpSocket's `isIPv6`).
    public var isIPv6: Bool { family(.inet6) }

    private func family(_ family: SocketAddress.Family) -> Bool {
        shared.withLock { shared in
            if let connected = shared.connectStage == .connected ? shared.connectedAddress : nil { return connected.family == family }
            if shared.localIPv4 != nil || shared.localIPv6 != nil {
                return (family == .inet ? shared.localIPv4 : shared.localIPv6) != nil
            }
            return family == .inet ? shared.options.isIPv4Enabled : shared.options.isIPv6Enabled
        }
    }

    /// Runs `block` on the socket's event-loop thread with its descriptors and returns what it returns,
    /// waiting for it (GCDAsyncUdpSocket's `performBlock:` with `socketFD`/`socket4FD`/`socket6FD`): for
    /// socket options this class does not wrap. Do not close the descriptors or change their blocking
    /// mode. Never call it from the loop thread of another loop that may be waiting on this one.
    public func perform<Result: Sendable>(_ block: @escaping @Sendable (Descriptors) -> Result) -> Result {
        eventLoop.runAndWait { [self] in
            block(Descriptors(socket4FD: channel(.inet)?.fd ?? -1, socket6FD: channel(.inet6)?.fd ?? -1))
        }
    }
}
