import Foundation

/// How far the current read or write has come (GCDAsyncSocket's `progressOfReadReturningTag:bytesDone:total:`).
public struct TransferProgress: Sendable, Equatable {
    /// The request's tag.
    public var tag: Int
    /// Bytes received (for a read) or handed to the kernel (for a write) so far.
    public var bytesDone: UInt
    /// The request's size in bytes when known: a read to length, a write; `nil` for a read of
    /// available bytes or to a delimiter.
    public var total: UInt?

    public init(tag: Int, bytesDone: UInt, total: UInt?) {
        self.tag = tag
        self.bytesDone = bytesDone
        self.total = total
    }

    /// `bytesDone / total` from 0 to 1, or `nil` when the total is not known.
    public var fraction: Double? { total.map { $0 == 0 ? 1 : Double(bytesDone) / Double($0) } }
}

extension TCPSocket {
    /// True once connected (or accepted, or adopted), until disconnected.
    public var isConnected: Bool { shared.withLock { $0.state == .connected } }
    /// True before the first connect and after a disconnect; false while connecting, connected or listening.
    public var isDisconnected: Bool { shared.withLock { $0.state == .idle || $0.state == .disconnected } }
    /// The peer's numeric address (`"127.0.0.1"`, `"::1"`) while connected, else `nil`.
    public var connectedHost: String? { connectedAddress.flatMap { $0.family == .unix ? nil : $0.host } }
    /// The peer's port while connected, else 0.
    public var connectedPort: UInt16 { connectedAddress?.port ?? 0 }
    /// The peer's address while connected.
    public var connectedAddress: SocketAddress? { shared.withLock { $0.remoteAddress } }
    /// The Unix-domain socket path connected to, as a file URL (GCDAsyncSocket's `connectedUrl`).
    public var connectedUrl: URL? { connectedAddress?.path.map { URL(fileURLWithPath: $0) } }
    /// This side's numeric address while connected or listening.
    public var localHost: String? { localAddress.flatMap { $0.family == .unix ? nil : $0.host } }
    /// This side's port while connected or listening (for a listener on port 0: the port the kernel
    /// chose), else 0.
    public var localPort: UInt16 { localAddress?.port ?? 0 }
    /// This side's address while connected or listening (the first listening address for a listener).
    public var localAddress: SocketAddress? { shared.withLock { $0.localAddress } }
    /// The Unix-domain socket path listened on or bound, as a file URL.
    public var localUrl: URL? { localAddress?.path.map { URL(fileURLWithPath: $0) } }
    /// True when connected (or listening) over IPv4.
    public var isIPv4: Bool { shared.withLock { ($0.remoteAddress ?? $0.localAddress)?.family == .inet } }
    /// True when connected (or listening) over IPv6.
    public var isIPv6: Bool { shared.withLock { ($0.remoteAddress ?? $0.localAddress)?.family == .inet6 } }

    /// Runs `block` on the socket's event-loop thread with the raw descriptor (-1 when there is none;
    /// the first listening descriptor for a listener), for socket options this class does not wrap
    /// (GCDAsyncSocket's `performBlock:` with `socketFD`). Do not close the descriptor or change its
    /// blocking mode.
    public func perform(_ block: @escaping @Sendable (Int32) -> Void) {
        onLoop { [self] in
            switch lifecycle {
            case .connected(let connection): block(connection.fd)
            case .listening(let acceptor): block(acceptor.listeners.first?.fd ?? -1)
            default: block(-1)
            }
        }
    }

    /// The current read's progress, or `nil` when no read is queued. Waits for the event loop.
    public func progressOfRead() -> TransferProgress? {
        eventLoop.runAndWait { [self] in
            guard let connection = lifecycle.connection, let head = connection.readQueue.first else { return nil }
            let done = UInt(head.bytesDone(unread: connection.buffer.count))
            if case .toLength(let length) = head.kind {
                return TransferProgress(tag: head.tag, bytesDone: done, total: UInt(length))
            }
            return TransferProgress(tag: head.tag, bytesDone: done, total: nil)
        }
    }

    /// The current write's progress, or `nil` when no write is queued. Waits for the event loop.
    public func progressOfWrite() -> TransferProgress? {
        eventLoop.runAndWait { [self] in
            lifecycle.connection?.writeQueue.first.map { TransferProgress(tag: $0.tag, bytesDone: UInt($0.sent), total: UInt($0.count)) }
        }
    }

    /// Whether the socket is connected, as its loop sees it: for code on the loop thread (a frame
    /// handler) that must stop handing frames on once a callback has closed the connection.
    package var isConnectedOnLoop: Bool {
        eventLoop.assertInEventLoop()
        return state == .connected
    }

    /// Bytes received and not yet taken by a read (for tests); waits for the loop.
    package var bufferedReadBytes: Int {
        eventLoop.runAndWait { [self] in
            switch lifecycle {
            case .connecting(let connection, _), .connected(let connection), .closed(_, let connection?):
                return connection.buffer.count
            default:
                return 0
            }
        }
    }
}
