import AsyncSocket
import CAsyncSocketShims
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A ``NetworkChangeSource`` that watches the kernel's routing table and interface addresses through
/// netlink (Linux's `NETLINK_ROUTE` socket, subscribed to `RTMGRP_IPV4_ROUTE`, `RTMGRP_IPV6_ROUTE`,
/// `RTMGRP_IPV4_IFADDR` and `RTMGRP_IPV6_IFADDR`; see rtnetlink(7)). Each batch of netlink messages
/// read at once is one report, to every handler, on the monitor's own serial dispatch queue. The
/// messages are not parsed: the link re-derives the network identifier and acts only when it differs.
/// Several links may share one monitor (copies of one ``SmartHeartbeat`` do): one socket, one handler
/// per ``start(onChange:)``. Linux only: elsewhere ``start(onChange:)`` throws.
public final class RouteChangeMonitor: NetworkChangeSource, @unchecked Sendable {
    private let queue = DispatchQueue(label: "LongLink.RouteChangeMonitor")
    // Confined to `queue`.
    private var source: DispatchSourceRead?
    private var handlers: [@Sendable () -> Void] = []

    /// A monitor; it opens its socket on ``start(onChange:)``.
    public init() {}

    /// A monitor on Linux, `nil` elsewhere (the default of ``SmartHeartbeat/networkChanges``).
    public static func makeDefault() -> RouteChangeMonitor? {
        #if os(Linux)
            return RouteChangeMonitor()
        #else
            return nil
        #endif
    }

    /// Opens the netlink socket (at the first call) and reports each batch of routing or address
    /// changes to `onChange`, besides the handlers of earlier calls.
    /// - Throws: `SocketError` (`SocketError.system(operation:errno:)`) with the errno of socket(2) or bind(2) (`ENOSYS` off Linux).
    public func start(onChange: @escaping @Sendable () -> Void) throws {
        try queue.sync {
            guard source == nil else {
                handlers.append(onChange)
                return
            }
            let fd = cass_route_change_socket()
            guard fd >= 0 else { throw SocketError.system(operation: "netlink route socket", errno: errno) }
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in self?.drain(fd) }
            source.setCancelHandler { close(fd) }
            self.source = source
            handlers.append(onChange)
            source.resume()
        }
    }

    /// Stops every handler and closes the socket; a later ``start(onChange:)`` opens it again.
    public func stop() {
        queue.sync {
            handlers.removeAll()
            source?.cancel()
            source = nil
        }
    }

    deinit { source?.cancel() }

    /// Reads every message waiting (they are not needed, only that they came), then reports once.
    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 8192)
        var got = false
        while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 { got = true }
        if got { for handler in handlers { handler() } }
    }
}
