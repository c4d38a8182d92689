import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A UDP echo server on ``UDPSocket``, for benchmarks (`shared/bench/udp-loadgen.c`): every datagram
/// goes back to its sender unchanged, as `shared/bench/peers/c-udp-echo.c` does. Callbacks run on the
/// event-loop thread (`delegateQueue: nil`), the socket receives continuously (up to 32 datagrams per
/// `recvmmsg(2)`) and the echoes queued by one batch of callbacks go out together (`sendmmsg(2)`).
/// Like the C peer it asks for 4 MiB socket receive and send buffers (the kernel caps them at
/// `net.core.rmem_max` / `wmem_max`), so both drop the same way when a burst outruns them.
public final class UDPEchoServer: UDPSocketDelegate, Sendable {
    /// The receive and send buffer sizes asked for, in bytes: 4 MiB, as the C peer asks.
    public static let socketBufferBytes: Int32 = 4 << 20

    private let group: EventLoopGroup
    private let socket: LockedValue<UDPSocket?> = LockedValue(nil)

    /// A server with one event-loop thread of its own; ``start(host:port:)`` binds it.
    public init() {
        group = EventLoopGroup(numberOfThreads: 1, name: "socket-bench-udp")
    }

    /// Binds to `host` (an address such as `127.0.0.1` or `::1`, or an interface name) and `port`, starts
    /// echoing and returns the port bound (the kernel's pick when `port` is 0).
    ///
    /// - Throws: ``SocketError`` from ``UDPSocket/bind(toPort:interface:)`` (`EADDRINUSE`, an unknown
    ///   interface, …) or ``UDPSocket/beginReceiving()``.
    public func start(host: String, port: UInt16) throws(SocketError) -> UInt16 {
        let socket = UDPSocket(delegate: self, delegateQueue: nil, group: group)
        try socket.bind(toPort: port, interface: host)
        socket.perform { descriptors in
            var size = UDPEchoServer.socketBufferBytes
            for fd in [descriptors.socket4FD, descriptors.socket6FD] where fd >= 0 {
                _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        try socket.beginReceiving()
        self.socket.withLock { $0 = socket }
        return socket.localPort
    }

    /// Closes the socket and stops the loop; no callback runs after this returns.
    public func stop() {
        socket.withLock { $0 }?.close()
        group.shutdown()
    }

    // MARK: - UDPSocketDelegate (on the loop thread)

    /// Sends `data` back to `address`; no timeout, as a UDP send either goes to the kernel or fails.
    public func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?
    ) {
        sock.send(data, to: address, withTimeout: -1, tag: 0)
    }
}
