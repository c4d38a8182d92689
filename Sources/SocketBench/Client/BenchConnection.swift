import AsyncSocket
import Foundation

/// An echo that differs from what was sent: the verifying read throws it, which ends the connection.
struct EchoMismatch: Error, CustomStringConvertible {
    /// Which frame (0-based sequence number of its connection) and byte offset within it.
    let frame: UInt64, offset: Int
    var description: String { "echo mismatch in frame \(frame) at byte \(offset)" }
}

/// One client connection: sends LP4 frames of the run's ``FramePattern`` and verifies every echoed
/// byte in place, as it arrives (`readFrame(decodingWith:)` consumes whatever bytes are unread, so no
/// `Data` is made per read). Records each frame's round trip (from queuing its write to verifying its
/// last echoed byte, nanoseconds) in its loop's ``LoopState``.
///
/// Its socket has no delegate queue: every callback, and every method here after ``connect(to:from:timeout:)``,
/// runs on the connection's event-loop thread (hence the unchecked Sendable).
final class BenchConnection: TCPSocketDelegate, @unchecked Sendable {
    /// Index of the connection in the run: picks its frames' ring slots and its source address.
    let id: Int
    let socket: TCPSocket
    unowned let loop: LoopState
    private unowned let connector: Connector
    let depth: Int
    var isConnecting = false
    /// Connected and not yet disconnected.
    private(set) var isOpen = false
    /// Failed or missed a heartbeat echo.
    private(set) var hasFailed = false
    /// Frames queued for writing, frames echoed and verified, and bytes of frame `received` verified.
    /// Loop-confined, as everything here: the fields used per echo are unchecked for exclusivity (no
    /// runtime access record per use).
    @exclusivity(unchecked) var sent: UInt64 = 0
    @exclusivity(unchecked) var received: UInt64 = 0
    @exclusivity(unchecked) var receivedBytes = 0
    /// Frames that may be queued: `received + depth` while the run lasts (idle: heartbeats due).
    @exclusivity(unchecked) var limit: UInt64 = 0
    /// When each frame in flight was queued, by sequence number modulo the depth (nanoseconds).
    @exclusivity(unchecked) var sendTimes: [UInt64]
    /// When the next heartbeat is due (idle; nanoseconds on ``MonotonicClock``).
    var nextHeartbeat: UInt64 = 0
    /// The verifying read's consumer, made once.
    private var verifier: ByteConsumer?
    /// Clock reading of the last verified read, nanoseconds.
    @exclusivity(unchecked) var lastRead: UInt64 = 0
    /// WebSocket runs: the upgrade is done; the server's frames; whether a data message is partly
    /// received; the payload of a control frame being read (a Ping to answer, a Close).
    var isUpgraded = false
    @exclusivity(unchecked) var reader = WebSocketEchoReader()
    @exclusivity(unchecked) var isInsideMessage = false
    var controlPayload: [UInt8] = []
    /// Corpus runs: the negotiated permessage-deflate (nil: none), the echo being received, and whether
    /// it is compressed (RSV1 on its first frame).
    var deflate: ClientDeflate?
    var receivedMessage = Data()
    var isMessageCompressed = false

    init(id: Int, loop: LoopState, connector: Connector, group: EventLoopGroup) {
        self.id = id
        self.loop = loop
        self.connector = connector
        depth = loop.options.depth
        sendTimes = [UInt64](repeating: 0, count: depth)
        socket = TCPSocket(delegate: nil, delegateQueue: nil, group: group, eventLoop: loop.eventLoop)
        socket.delegate = self
        verifier = { [unowned self] bytes in
            if try (self.loop.webSocketPattern == nil ? verify(bytes) : verifyWebSocket(bytes)) > 0 { echoesArrived() }
            return .needMoreData(consumed: bytes.count)
        }
    }

    /// An idle connection whose last heartbeat is not echoed yet.
    var awaitsEcho: Bool { received < limit }

    /// Marks the connection failed (a missed heartbeat echo).
    func markFailed() { hasFailed = true }

    /// Starts connecting to `address` (or `host`, when it is a name), from `source` when given. Any thread.
    /// - Throws: ``SocketError`` when the connect cannot start.
    func connect(to address: SocketAddress?, host: String, port: UInt16, from source: String?, timeout: TimeInterval) throws(SocketError) {
        isConnecting = true
        if let address {
            try socket.connect(to: address, viaInterface: source, withTimeout: timeout)
        } else {
            try socket.connect(toHost: host, onPort: port, viaInterface: source, withTimeout: timeout)
        }
    }

    /// Queues the first window of frames (pipeline, pingpong, bulk).
    func startSending(at now: UInt64) {
        guard isOpen else { return }
        limit = UInt64(depth)
        sendDue(at: now)
    }

    /// Sends one heartbeat unless the previous one is still unanswered, which counts as missed (idle).
    func sendHeartbeat(at now: UInt64) {
        guard isOpen else { return }
        if received < limit {
            loop.figures.heartbeatsMissed += 1
            hasFailed = true
            return
        }
        limit += 1
        loop.figures.heartbeatsSent += 1
        sendDue(at: now)
    }

    /// Queues frames `sent ..< limit`, contiguous ones of the ring as one write.
    private func sendDue(at now: UInt64) {
        if loop.corpus != nil { return sendCorpus(at: now) }
        while sent < limit {
            let (data, frames) =
                loop.webSocketPattern?.frames(from: sent, count: Int(limit - sent), connection: id)
                ?? loop.pattern.frames(from: sent, count: Int(limit - sent), connection: id)
            for sequence in sent..<sent + UInt64(frames) { sendTimes[Int(sequence % UInt64(depth))] = now }
            sent += UInt64(frames)
            socket.write(data, withTimeout: -1, tag: 0)
        }
    }

    /// Checks `bytes` (all the unread bytes) against the frames sent, consumes them all, and returns
    /// how many frames they completed.
    /// - Throws: ``EchoMismatch`` at the first byte that differs, or for bytes of a frame never sent.
    private func verify(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        let now = MonotonicClock.now()
        lastRead = now
        let frameSize = loop.pattern.frameSize
        var offset = 0, completed = 0
        while offset < bytes.count {
            let take = min(frameSize - receivedBytes, bytes.count - offset)
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take])
            guard received < sent, loop.pattern.matches(chunk, sequence: received, connection: id, offset: receivedBytes) else {
                loop.figures.mismatches += 1
                throw EchoMismatch(frame: received, offset: receivedBytes)
            }
            offset += take
            receivedBytes += take
            if receivedBytes == frameSize {
                loop.recordEcho(at: now, latency: now &- sendTimes[Int(received % UInt64(depth))])
                received += 1
                receivedBytes = 0
                completed += 1
            }
        }
        return completed
    }

    /// Verifies every echo for the rest of the connection, as the bytes arrive (one consuming read).
    private func readEchoes() {
        guard let verifier else { return }
        socket.read(.consuming(verifier, maxLength: 0), timeout: -1, tag: 0) { _ in }
    }

    // MARK: - TCPSocketDelegate (loop thread)

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        guard let tls = loop.tlsSettings else {
            opened()
            return
        }
        // Connected once secured: a failed handshake is a failed connect.
        sock.startTLS(tls)
    }

    func socketDidSecure(_ sock: TCPSocket) {
        opened()
    }

    func opened() {
        if loop.webSocketPattern != nil && !isUpgraded { return upgrade() }
        isConnecting = false
        isOpen = true
        readEchoes()
        connector.connectionDidResolve(connected: true)
    }

    /// Echoes completed frames: send as many more as the depth allows.
    private func echoesArrived() {
        if loop.options.mode != .idle && lastRead < loop.schedule.measureEnd && !loop.isStopping {
            limit = received + UInt64(depth)
            sendDue(at: lastRead)
        }
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        verifier = nil
        if isConnecting {
            isConnecting = false
            hasFailed = true
            connector.connectionDidResolve(connected: false, error: err)
            return
        }
        let wasOpen = isOpen
        isOpen = false
        guard wasOpen, !loop.isStopping else { return }
        hasFailed = true
        loop.figures.errors += 1
        loop.reportError("connection \(id) closed: \(err.map { "\($0)" } ?? "by the server")")
    }
}
