import AsyncSocket
import FramedSocket
import Foundation
import SocketFraming

/// An echo server on our own stack, for benchmarks: every callback runs on the event-loop thread (no
/// delegate queue), and the loops of its own ``EventLoopGroup`` serve the connections round robin.
/// A connection whose peer sends without reading stops being read once ``writeHighWatermark`` (1 MiB)
/// of echoes wait to be sent, and reads again at ``writeLowWatermark`` (256 KiB), as the C peer does:
/// memory stays bounded and TCP flow control slows the peer down.
public final class EchoServer: TCPSocketDelegate, Sendable {
    /// What the server echoes (or drops) and how it reads it.
    public enum Mode: String, Sendable, CaseIterable {
        /// LP4 (`shared/bench/README.md`) as the bench's other servers do it: every whole frame that has
        /// arrived comes as one run of bytes (FramedSocket's `readFrameRuns(slicedBy:)` with a
        /// ``LengthFieldBasedFrameDecoder`` as the slicer) and is written back in one write.
        case lp4
        /// LP4 one frame at a time, the way apps write servers: FramedSocket's `readFrames(slicedBy:)`
        /// hands each frame to its own callback as a borrowed view of the read buffer, and each is
        /// written back on its own with `write(copying:)` (staged: no allocation per frame; the writes
        /// gathered into one `sendmsg(2)`).
        case lp4PerFrame = "lp4-per-frame"
        /// Bytes as they arrive (`readData(withTimeout:tag:)`), written back as they came.
        case raw
        /// Nothing written back: every byte read is dropped as it arrives (RFC 863's Discard service),
        /// by one consuming read that makes no `Data`. For one-direction throughput (a sink).
        case discard
    }

    /// The largest LP4 payload the server echoes: 16 MiB (16,777,216 bytes), as the LP4 protocol says;
    /// a longer frame closes its connection with ``SocketError/decodingFailed(_:)``.
    public static let maxPayloadLength = 16 << 20
    /// The largest LP4 frame in bytes: the 4-byte length field and the largest payload.
    static let maxFrameLength = 4 + maxPayloadLength
    /// LP4's framing: a 4-byte big-endian length of the payload that follows, nothing stripped.
    static let lp4Framing = LengthFieldBasedFrameDecoder(maxFrameLength: maxFrameLength, lengthFieldLength: 4, initialBytesToStrip: 0)
    /// Queued echo bytes (1 MiB) above which a connection stops reading until they fall to
    /// ``writeLowWatermark``: a peer that sends without reading holds at most this much of the
    /// server's memory, and TCP flow control slows it down.
    static let writeHighWatermark = 1 << 20
    /// Queued echo bytes (256 KiB) at which a paused connection reads again.
    static let writeLowWatermark = 256 << 10

    /// What this server echoes.
    public let mode: Mode
    /// TLS for every accepted connection (started at accept), or nil for plaintext.
    public let tls: TLSConfiguration?
    private let group: EventLoopGroup
    private let listener: LockedValue<TCPSocket?> = LockedValue(nil)

    /// - Parameters:
    ///   - mode: LP4 frames or raw bytes.
    ///   - loops: event-loop threads serving the connections (at least 1).
    ///   - tls: a server's TLS settings, so every connection is secured first (its echo goes through TLS).
    public init(mode: Mode, loops: Int = 1, tls: TLSConfiguration? = nil) {
        self.mode = mode
        self.tls = tls
        group = EventLoopGroup(numberOfThreads: max(1, loops), name: "socket-bench")
    }

    /// Listens on `host` and `port` and returns the port listened on (the kernel's pick when `port` is 0).
    ///
    /// - Parameter reusePort: set `SO_REUSEPORT`, so several server processes can share the port.
    /// - Throws: ``SocketError`` from ``TCPSocket/accept(onInterface:port:backlog:)`` (`EADDRINUSE`, an
    ///   unknown interface, …).
    public func start(host: String, port: UInt16, reusePort: Bool = false) throws(SocketError) -> UInt16 {
        let socket = TCPSocket(delegate: self, delegateQueue: nil, group: group)
        socket.isReusePortEnabled = reusePort
        // Accepted connections inherit these.
        socket.writeHighWatermark = EchoServer.writeHighWatermark
        socket.writeLowWatermark = EchoServer.writeLowWatermark
        try socket.accept(onInterface: host, port: port, backlog: 4096)
        listener.withLock { $0 = socket }
        return socket.localPort
    }

    /// Stops listening and stops the loops; no callback runs after this returns. Connections still
    /// open stay open (unserved) until the process ends: close them from the client side first.
    public func stop() {
        listener.withLock { $0 }?.disconnect()
        group.shutdown()
    }

    /// How many timers each of the server's loops holds (``EventLoop/pendingTimerCount``): none however
    /// many connections are open, since no read or write has a timeout. Waits for each loop; not from a
    /// loop thread of this server.
    var loopTimerCounts: [Int] { group.loops.map { loop in loop.runAndWait { loop.pendingTimerCount } } }

    // MARK: - TCPSocketDelegate (on the connection's loop thread)

    public func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        if let tls { newSocket.startTLS(tls) }  // a barrier: the reads below wait for the handshake
        readNext(on: newSocket)
    }

    public func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        // Raw mode only.
        sock.write(data, withTimeout: -1, tag: 0)
        // Above the high watermark the next read waits for the low watermark.
        if !EchoServer.isBackedUp(sock) { readNext(on: sock) }
    }

    public func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {
        readNext(on: sock)
    }

    /// Whether `socket`'s queued echoes are over the high watermark, so it should stop reading.
    static func isBackedUp(_ socket: TCPSocket) -> Bool { socket.queuedWriteBytes > writeHighWatermark }

    /// The discard mode's read: takes every unread byte and goes on.
    private static let dropAll: ByteConsumer = { bytes in .needMoreData(consumed: bytes.count) }

    /// Reads until the echoes back up (then ``socket(_:writeQueueDidFallToLowWatermark:)`` reads again).
    /// The frame handlers are given the socket: they capture nothing, so a connection holds no closure.
    private func readNext(on socket: TCPSocket) {
        switch mode {
        case .raw:
            socket.readData(withTimeout: -1, tag: 0)
        case .lp4:
            socket.readFrameRuns(slicedBy: EchoServer.lp4Framing, pauseFrames: EchoServer.isBackedUp) { socket, frames in
                socket.write(copying: frames, withTimeout: -1, tag: 0)
            }
        case .lp4PerFrame:
            socket.readFrames(slicedBy: EchoServer.lp4Framing, pauseFrames: EchoServer.isBackedUp) { socket, frame in
                socket.write(copying: frame, withTimeout: -1, tag: 0)
            }
        case .discard:
            socket.read(.consuming(EchoServer.dropAll, maxLength: 0), timeout: -1, tag: 0) { _ in }
        }
    }
}
