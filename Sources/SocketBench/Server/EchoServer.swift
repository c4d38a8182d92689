import AsyncSocket
import Foundation
import SocketFraming

/// An echo server on our own stack, for benchmarks: every callback runs on the event-loop thread (no
/// delegate queue), and the loops of its own ``EventLoopGroup`` serve the connections round robin.
///
/// - ``Mode/lp4``: LP4 (`shared/bench/README.md`) through SocketFraming: a
///   ``LengthFieldBasedFrameDecoder`` (4-byte big-endian length, nothing stripped) reads each frame and
///   the same bytes are written back. A frame whose length field is over ``maxPayloadLength`` (16 MiB)
///   closes that connection with ``SocketError/badFrame(_:)``.
/// - ``Mode/raw``: every byte read is written back as it came (`readData(available)`).
public final class EchoServer: TCPSocketDelegate, Sendable {
    /// What the server echoes.
    public enum Mode: String, Sendable, CaseIterable {
        /// Whole LP4 frames, through the framing layer.
        case lp4
        /// Bytes as they arrive.
        case raw
    }

    /// The largest LP4 payload the server echoes: 16 MiB (16,777,216 bytes), as the LP4 protocol says.
    public static let maxPayloadLength = 16 << 20

    /// What this server echoes.
    public let mode: Mode
    private let group: EventLoopGroup
    private let listener: LockedValue<TCPSocket?> = LockedValue(nil)
    private let connections = LockedValue(0)

    /// - Parameters:
    ///   - mode: LP4 frames or raw bytes.
    ///   - loops: event-loop threads serving the connections (at least 1).
    public init(mode: Mode, loops: Int = 1) {
        self.mode = mode
        group = EventLoopGroup(numberOfThreads: max(1, loops), name: "socket-bench")
    }

    /// Connections open now.
    public var connectionCount: Int { connections.withLock { $0 } }

    /// Listens on `host` and `port` and returns the port listened on (the kernel's pick when `port` is 0).
    ///
    /// - Parameter reusePort: set `SO_REUSEPORT`, so several server processes can share the port.
    /// - Throws: ``SocketError`` from ``TCPSocket/accept(onInterface:port:backlog:)`` (`EADDRINUSE`, an
    ///   unknown interface, …).
    public func start(host: String, port: UInt16, reusePort: Bool = false) throws(SocketError) -> UInt16 {
        let socket = TCPSocket(delegate: self, delegateQueue: nil, group: group)
        socket.isReusePortEnabled = reusePort
        try socket.accept(onInterface: host, port: port, backlog: 4096)
        listener.withLock { $0 = socket }
        return socket.localPort
    }

    /// Stops listening, closes every connection and the loops; callbacks stop before this returns.
    public func stop() {
        listener.withLock { $0 }?.disconnect()
        group.shutdown()
    }

    // MARK: - TCPSocketDelegate (on the connection's loop thread)

    public func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        connections.withLock { $0 += 1 }
        switch mode {
        case .lp4: LP4Connection.start(on: newSocket, server: self)
        case .raw: newSocket.readData(withTimeout: -1, tag: 0)
        }
    }

    public func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        sock.write(data, withTimeout: -1, tag: 0)
        sock.readData(withTimeout: -1, tag: 0)
    }

    public func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        connectionDidEnd()
    }

    func connectionDidEnd() {
        connections.withLock { $0 -= 1 }
    }
}
