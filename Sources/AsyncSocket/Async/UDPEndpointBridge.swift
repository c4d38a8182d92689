import Foundation

/// The delegate of a ``UDPEndpoint``'s socket, with the socket's delegate queue `nil`: every callback
/// runs inline on the socket's event-loop thread and resumes the waiting calls there.
///
/// Receiving: the socket receives continuously into a buffer of at most `limit` datagrams. Each read
/// takes no more datagrams than the buffer has room for (``UDPSocket/receiveBatchLimit``); when it is
/// full the socket pauses, and it resumes once the iteration has taken the buffer down to `limit / 2`.
/// Sends map one to one onto the socket's sends, tagged with their number.
final class UDPEndpointBridge: UDPSocketDelegate, Sendable {
    /// The endpoint's own locked fields, beside the datagrams, the end and the close.
    struct Fields {
        var connect = PendingConnect<SocketAddress>()

        /// The most datagrams the buffer has held at once (for tests).
        var peakBuffered = 0
        /// The buffer filled up and the socket stopped reading.
        var paused = false
        var resumeScheduled = false
        var skipped = UDPEndpoint.SkippedReceives()

        /// Sends not yet reported by the socket, by tag (their number).
        var sends: [Int: CheckedContinuation<Result<Void, SocketError>, Never>] = [:]
        var sendsCalled = 0
    }

    /// The shared locked state: the datagrams received and the `next()` calls waiting for them (they
    /// finish at ``close()``, discarding those buffered, or when the socket closes, after those
    /// buffered, with the error that closed it), `ended` (the error every call throws once the socket
    /// has closed), and this bridge's ``Fields``.
    typealias Lock = AsyncBridgeLock<UDPEndpoint.Datagram, Fields>
    typealias State = Lock.State

    let socket: UDPSocket
    /// ``UDPEndpoint/Options/maxBufferedDatagrams``.
    let limit: Int
    private let lock = Lock(Fields())

    init(socket: UDPSocket, limit: Int) {
        self.socket = socket
        self.limit = limit
    }

    @discardableResult
    private func locked<Result>(_ body: (inout State, inout AsyncEffects) -> Result) -> Result {
        lock.locked(body)
    }

    // MARK: For tests and diagnostics

    /// Datagrams received and not yet taken.
    var bufferedDatagrams: Int { lock.withLock { $0.bufferedCount } }
    /// The most datagrams buffered at once so far.
    var peakBufferedDatagrams: Int { lock.withLock { $0.peakBuffered } }
    /// Whether the socket stopped reading because the buffer is full.
    var isReceivingPaused: Bool { lock.withLock { $0.paused } }
    /// `next()` calls waiting for a datagram.
    var waitingIterations: Int { lock.withLock { $0.waitingCount } }
    /// Sends not yet reported by the socket.
    var pendingSends: Int { lock.withLock { $0.sends.count } }
    /// Whether ``close()`` was called.
    var isCloseRequested: Bool { lock.withLock { $0.closeRequested } }
    /// What receiving skipped.
    var skipped: UDPEndpoint.SkippedReceives { lock.withLock { $0.skipped } }

    // MARK: Starting

    /// Starts the connect with `start` and waits for its outcome. Cancellation closes the socket
    /// (abandoning the connect) and throws `CancellationError`.
    func connect(_ start: (UDPSocket) throws(SocketError) -> Void) async throws -> SocketAddress {
        try await lock.state.awaitConnect(
            \.extra.connect, start: { () throws(SocketError) in try start(socket) }, abandon: { [socket] in socket.close() })
    }

    func udpSocket(_ sock: UDPSocket, didConnectToAddress address: SocketAddress) {
        connectEnded(.success(address))
    }

    func udpSocket(_ sock: UDPSocket, didNotConnect error: SocketError) {
        connectEnded(.failure(error))
    }

    private func connectEnded(_ outcome: Result<SocketAddress, SocketError>) {
        locked { state, effects in
            // After a cancellation, the abandoning close resumes the task.
            if let continuation = state.connect.takeForOutcome() {
                effects.append { continuation.resume(with: outcome) }
            }
        }
    }

    /// Sets the first read's size and starts receiving continuously. Call once bound or connected.
    func startReceiving() throws(SocketError) {
        let batch = min(limit, DatagramBatch.capacity)
        let result = socket.eventLoop.runAndWait { [socket] in
            socket.receiveBatchLimit = batch
            return Result { () throws(SocketError) in try socket.beginReceiving() }
        }
        try result.get()
    }

    // MARK: Receiving

    func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?
    ) {
        let datagram = UDPEndpoint.Datagram(data: data, sender: address)
        // On the loop thread, inline: the buffer grows only here, so the room computed now is a lower
        // bound until the next callback.
        let room = locked { state, effects -> Int in
            switch state.offer(datagram, &effects) {
            case .refused:
                return 0  // closed
            case .handed:
                return limit
            case .buffered(let count):
                state.peakBuffered = max(state.peakBuffered, count)
                let room = limit - count
                if room <= 0 { state.paused = true }
                return room
            }
        }
        if room > 0 {
            sock.receiveBatchLimit = min(room, DatagramBatch.capacity)
        } else if lock.withLock({ $0.paused && !$0.closeRequested }) {
            sock.pauseReceiving()  // inline: already on the loop
        }
    }

    func udpSocket(_ sock: UDPSocket, didNotReceiveDataFromAddress address: SocketAddress?, dueToError error: SocketError) {
        lock.withLock { state in
            if case .datagramTruncated = error { state.skipped.truncated += 1 } else { state.skipped.failed += 1 }
            state.skipped.lastError = error
        }
    }

    /// The next datagram; `nil` once the endpoint is closed or when the task is cancelled.
    func next() async throws(SocketError) -> UDPEndpoint.Datagram? {
        try await lock.next(whenTaken: { state, effects in resumeIfCaughtUp(&state, &effects) }).get()
    }

    /// Schedules reading to resume on the loop once a paused buffer is down to half the limit.
    private func resumeIfCaughtUp(_ state: inout State, _ effects: inout AsyncEffects) {
        guard state.paused, !state.resumeScheduled, state.bufferedCount <= limit / 2 else { return }
        state.resumeScheduled = true
        effects.append { [self] in socket.eventLoop.execute { [self] in resumeReceiving() } }
    }

    /// Reads again, at most as many datagrams per read as the buffer has room for. Loop thread only.
    private func resumeReceiving() {
        let room = lock.withLock { state -> Int in
            state.resumeScheduled = false
            guard state.paused, !state.closeRequested, state.ended == nil else { return 0 }
            state.paused = false
            return limit - state.bufferedCount
        }
        guard room > 0 else { return }
        socket.receiveBatchLimit = min(room, DatagramBatch.capacity)
        try? socket.beginReceiving()  // fails only once the socket is closed
    }

    // MARK: Sending

    /// Why calls fail now, or nil.
    private func endError(_ state: State) -> SocketError? {
        state.closeRequested ? .connectionClosed : state.ended
    }

    /// Sends `data` to `address` (to the connected peer when `nil`) and returns once the kernel took it
    /// or the socket reported it failed.
    func send(_ data: Data, to address: SocketAddress?) async throws(SocketError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, SocketError>, Never>) in
            let tag = locked { state, effects -> Int? in
                if let error = endError(state) {
                    effects.append { continuation.resume(returning: .failure(error)) }
                    return nil
                }
                state.sendsCalled += 1
                state.sends[state.sendsCalled] = continuation
                return state.sendsCalled
            }
            guard let tag else { return }
            // Queued from the loop, where close() also runs: a send that reaches the loop after the
            // close fails here instead of opening the socket again.
            socket.onLoop { [self] in
                let refused = locked { state, effects -> Bool in
                    guard let error = endError(state) else { return false }
                    if let continuation = state.sends.removeValue(forKey: tag) {
                        effects.append { continuation.resume(returning: .failure(error)) }
                    }
                    return true
                }
                guard !refused else { return }
                if let address {
                    socket.send(data, to: address, withTimeout: -1, tag: tag)
                } else {
                    socket.send(data, withTimeout: -1, tag: tag)
                }
            }
        }
        try result.get()
    }

    func udpSocket(_ sock: UDPSocket, didSendDataWithTag tag: Int) {
        sendEnded(tag, .success(()))
    }

    func udpSocket(_ sock: UDPSocket, didNotSendDataWithTag tag: Int, dueToError error: SocketError) {
        sendEnded(tag, .failure(error))
    }

    private func sendEnded(_ tag: Int, _ outcome: Result<Void, SocketError>) {
        locked { state, effects in
            guard let continuation = state.sends.removeValue(forKey: tag) else { return }
            effects.append { continuation.resume(returning: outcome) }
        }
    }

    // MARK: Closing

    /// Closes the socket and returns once it has closed. Datagrams not yet taken are discarded and the
    /// iterations end; sends the kernel has not taken throw ``SocketError/connectionClosed``.
    func close() async {
        await lock.close(
            request: { state, effects in state.finish(failure: nil, keepingBuffered: false, &effects) },
            end: { socket.close() })
    }

    func udpSocketDidClose(_ sock: UDPSocket, withError err: SocketError?) {
        locked { state, effects in
            if let (continuation, cancelled) = state.connect.takeAtEnd() {
                // The connect was abandoned by cancellation, or the socket failed while connecting.
                if let continuation {
                    let error: any Error = cancelled ? CancellationError() : (err ?? SocketError.connectionClosed)
                    effects.append { continuation.resume(throwing: error) }
                }
            }
            guard state.ended == nil else { return }
            let error = state.closeRequested ? SocketError.connectionClosed : (err ?? .connectionClosed)
            state.ended = error
            // The datagrams buffered are still handed out, then the first `next()` throws the error.
            state.finish(failure: state.closeRequested ? nil : err, keepingBuffered: true, &effects)
            for continuation in state.sends.values { effects.append { continuation.resume(returning: .failure(error)) } }
            state.sends = [:]
            state.resumeCloseWaiters(&effects)
        }
    }
}
