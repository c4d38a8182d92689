import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UDPEndpoint {
    /// The default of ``Options/maxBufferedDatagrams``: 128 datagrams, four `recvmmsg(2)` batches of
    /// 32. With the largest IPv4 datagrams (65,507 bytes of payload) that is at most about 8 MiB.
    public static let defaultMaxBufferedDatagrams = 128

    /// Everything that can be set on an endpoint, for ``bind(host:port:options:group:)`` and
    /// ``connect(toHost:port:options:group:)``. `Options()` is the defaults, those of a ``UDPSocket``
    /// plus the receive buffer's bound.
    ///
    /// ```swift
    /// let endpoint = try await UDPEndpoint.bind(host: "127.0.0.1", port: 5353, options: .init(
    ///     maxBufferedDatagrams: 1024, receiveBufferSize: 4 << 20, isReusePortEnabled: true))
    /// ```
    public struct Options: Sendable, Equatable {
        /// The most received datagrams the endpoint holds for ``UDPEndpoint/datagrams`` while no task
        /// takes them; at least 1. Default ``UDPEndpoint/defaultMaxBufferedDatagrams`` (128).
        ///
        /// When this many wait, the endpoint stops reading from the kernel (``UDPSocket/pauseReceiving()``):
        /// further datagrams wait in the kernel's receive buffer (``receiveBufferSize``), which drops what
        /// does not fit, so a slow consumer costs kernel drops, never unbounded memory. Reading resumes
        /// once the consumer has taken the buffer down to half this number (rounded down).
        public var maxBufferedDatagrams = UDPEndpoint.defaultMaxBufferedDatagrams

        /// The largest datagram received whole, in bytes, 0 to 65,535. Default 65,535 (`UINT16_MAX`,
        /// as ``UDPSocket/maxReceiveIPv4BufferSize``): every IPv4 datagram fits. A longer datagram is
        /// discarded and counted in ``UDPEndpoint/skippedReceives`` as
        /// ``SocketError/datagramTruncated(size:maxReceiveSize:)``, never delivered cut short.
        public var maxReceiveSize = 65_535

        /// The kernel's receive buffer in bytes (`SO_RCVBUF`, socket(7); Linux doubles the value given
        /// and enforces a minimum of about 2 KiB), or `nil` (the default) for the system's
        /// (`net.core.rmem_default`, typically 208 KiB). What waits here while the endpoint's own
        /// buffer is full is what survives a slow consumer.
        public var receiveBufferSize: Int?

        /// The kernel's send buffer in bytes (`SO_SNDBUF`; Linux doubles it), or `nil` (the default)
        /// for the system's.
        public var sendBufferSize: Int?

        /// `SO_REUSEPORT` (socket(7)): several endpoints, each with it set, may bind one address and
        /// port; the kernel spreads unicast datagrams over them. Default false.
        public var isReusePortEnabled = false

        /// `SO_BROADCAST` (socket(7)): allows sends to a broadcast address (a subnet's, such as
        /// `127.255.255.255`, which stays on the machine); without it they throw
        /// ``SocketError/posix(operation:errno:)`` with `EACCES`. The limited broadcast address (all
        /// ones) leaves the machine on every interface: tests and benchmarks use `127.255.255.255`.
        /// Default false.
        public var isBroadcastEnabled = false

        /// Whether to use IPv4: with a `nil` host, ``UDPEndpoint/bind(host:port:options:group:)`` binds
        /// an IPv4 and an IPv6 descriptor, as enabled; a connect picks among the enabled families.
        /// Default true.
        public var isIPv4Enabled = true

        /// Whether to use IPv6, as ``isIPv4Enabled``. Default true.
        public var isIPv6Enabled = true

        /// Options with the values given, each parameter defaulting to the property's default.
        public init(
            maxBufferedDatagrams: Int = UDPEndpoint.defaultMaxBufferedDatagrams,
            maxReceiveSize: Int = 65_535,
            receiveBufferSize: Int? = nil,
            sendBufferSize: Int? = nil,
            isReusePortEnabled: Bool = false,
            isBroadcastEnabled: Bool = false,
            isIPv4Enabled: Bool = true,
            isIPv6Enabled: Bool = true
        ) {
            self.maxBufferedDatagrams = maxBufferedDatagrams
            self.maxReceiveSize = maxReceiveSize
            self.receiveBufferSize = receiveBufferSize
            self.sendBufferSize = sendBufferSize
            self.isReusePortEnabled = isReusePortEnabled
            self.isBroadcastEnabled = isBroadcastEnabled
            self.isIPv4Enabled = isIPv4Enabled
            self.isIPv6Enabled = isIPv6Enabled
        }

        /// Throws ``SocketError/badParam(_:)`` for values out of range.
        func validate() throws(SocketError) {
            guard maxBufferedDatagrams >= 1 else { throw SocketError.badParam("maxBufferedDatagrams must be at least 1") }
            guard (0...65_535).contains(maxReceiveSize) else {
                throw SocketError.badParam("maxReceiveSize must be 0 to 65535 bytes")
            }
            if let size = receiveBufferSize, size < 1 { throw SocketError.badParam("receiveBufferSize must be at least 1 byte") }
            if let size = sendBufferSize, size < 1 { throw SocketError.badParam("sendBufferSize must be at least 1 byte") }
        }

        /// Sets the options that apply before the socket has descriptors.
        func apply(to socket: UDPSocket) throws(SocketError) {
            socket.isIPv4Enabled = isIPv4Enabled
            socket.isIPv6Enabled = isIPv6Enabled
            socket.maxReceiveIPv4BufferSize = UInt16(clamping: maxReceiveSize)
            socket.maxReceiveIPv6BufferSize = UInt32(clamping: maxReceiveSize)
            try socket.enableReusePort(isReusePortEnabled)
            try socket.enableBroadcast(isBroadcastEnabled)
        }

        /// Sets the buffer sizes on the descriptors the socket has (after its bind or connect).
        func applyBufferSizes(to socket: UDPSocket) throws(SocketError) {
            guard receiveBufferSize != nil || sendBufferSize != nil else { return }
            let (receive, send) = (receiveBufferSize, sendBufferSize)
            let result = socket.perform { descriptors in
                Result { () throws(SocketError) in
                    for fd in [descriptors.socket4FD, descriptors.socket6FD] where fd >= 0 {
                        if let receive { try Posix.setOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: Int32(clamping: receive)) }
                        if let send { try Posix.setOption(fd, level: SOL_SOCKET, name: SO_SNDBUF, value: Int32(clamping: send)) }
                    }
                }
            }
            try result.get()
        }
    }
}
