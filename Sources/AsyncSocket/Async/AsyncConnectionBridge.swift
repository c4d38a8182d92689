import Foundation

/// One suspended call of the async API: its continuation while it waits, and whether its task was
/// cancelled before it could wait. The fields are guarded by the lock of the bridge that owns the call
/// (hence unchecked); the object identifies the call to its cancellation handler.
final class AsyncWaiter<Value: Sendable>: @unchecked Sendable {
    var continuation: CheckedContinuation<Value, any Error>?
    var cancelled = false

    /// Hands back the continuation, once, for resuming.
    func take() -> CheckedContinuation<Value, any Error>? {
        defer { continuation = nil }
        return continuation
    }

    /// Marks the wait cancelled (a continuation not parked yet resumes at once when it sees this) and
    /// hands back the parked continuation, if any, for resuming with the cancellation.
    func cancel() -> CheckedContinuation<Value, any Error>? {
        cancelled = true
        return take()
    }
}

/// One ``TCPConnection`` read: what it waits for, its timeout and its number. Fields guarded by the
/// bridge's lock.
final class AsyncReadTicket: @unchecked Sendable {
    let kind: AsyncReadKind
    let timeout: Duration?
    let waiter = AsyncWaiter<Data>()
    /// The read's number on its connection, from 1, in the order reads were queued; the tag of
    /// ``SocketError/readTimeout(tag:)``.
    var number = 0
    /// Leading received bytes already searched for the delimiter.
    var scanned = 0
    /// The read's timeout, running since the read became the current one.
    var timer: Scheduled?

    init(kind: AsyncReadKind, timeout: Duration?) {
        self.kind = kind
        self.timeout = timeout
    }
}

/// Work decided under a bridge's lock and done after it is released: resuming continuations and calling
/// into the socket, whose delegate callbacks (inline on the loop thread) take the lock again.
struct AsyncEffects {
    private var effects: [() -> Void] = []
    mutating func append(_ effect: @escaping () -> Void) { effects.append(effect) }
    func run() { for effect in effects { effect() } }
}

/// The delegate of a ``TCPConnection``'s socket, with the socket's ``TCPSocket/delegateQueue`` `nil`:
/// every callback runs inline on the socket's event-loop thread and resumes the waiting calls there.
///
/// Reads: the async reads wait in ``State/readers`` in call order. The bridge keeps at most one read of
/// available bytes queued on the socket, asking for no more than the current read still needs, and frames
/// the async reads itself over ``State/received``. A cancelled read is simply removed: bytes its socket
/// read brings stay in `received` for the reads after it, and no socket read can hold them back.
/// Timeouts are timers on the socket's loop; on expiry the connection closes with
/// ``SocketError/readTimeout(tag:)`` as a ``TCPSocket`` read timeout does.
///
/// Writes map one to one onto the socket's writes, tagged with their number.
final class AsyncConnectionBridge: TCPSocketDelegate, Sendable {
    struct State {
        // Connecting.
        var connect: AsyncWaiter<ConnectedAddresses>?
        var connectStarted = false

        // Ending.
        /// The error every call throws once the connection has ended (set by `socketDidDisconnect`).
        var ended: SocketError?
        /// A read timeout or maximum length decided here, before asking the socket to disconnect.
        var localFailure: SocketError?
        /// ``TCPConnection/close()`` was called: nothing is readable any more.
        var closeRequested = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []

        // Reading.
        var received = AsyncReceivedBytes()
        var readers: [AsyncReadTicket] = []
        var readsQueued = 0
        /// The tag of the socket read in flight, if any; at most one is.
        var socketRead: Int?
        var socketReadsIssued = 0
        /// The peer sent FIN and the socket has no more bytes for us.
        var readStreamClosed = false
        var readStreamWaiters: [AsyncWaiter<Void>] = []

        // Writing.
        /// Writes handed to the socket and not yet reported, by tag (their number). A cancelled write
        /// stays here, without a continuation, until the socket reports it.
        var writes: [Int: AsyncWaiter<Void>] = [:]
        var writesQueued = 0
        var writeCloseRequested = false
        var closeWriteWaiters: [AsyncWaiter<Void>] = []
    }

    struct ConnectedAddresses: Sendable {
        var local: SocketAddress?
        var remote: SocketAddress?
    }

    let socket: TCPSocket
    private let state: LockedValue<State>

    /// A bridge for `socket`, which is about to connect or was just accepted. Make it the socket's
    /// delegate, with a `nil` delegate queue.
    init(socket: TCPSocket) {
        self.socket = socket
        self.state = LockedValue(State())
    }

    /// How many reads have been queued so far (for tests).
    var readsQueued: Int { state.withLock { $0.readsQueued } }

    /// How many received bytes wait for a read (for tests).
    var unreadBytes: Int { state.withLock { $0.received.count } }

    @discardableResult
    private func locked<Result>(_ body: (inout State, inout AsyncEffects) -> Result) -> Result {
        var effects = AsyncEffects()
        let result = state.withLock { body(&$0, &effects) }
        effects.run()
        return result
    }

    // MARK: Connecting

    /// Starts the connect with `start` and waits for its outcome. Cancellation abandons the connect
    /// (``TCPSocket/disconnect()``) and throws `CancellationError`.
    func connect(_ start: (TCPSocket) throws(SocketError) -> Void) async throws -> ConnectedAddresses {
        try Task.checkCancellation()
        let waiter = AsyncWaiter<ConnectedAddresses>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // The connect starts under the lock, so a cancellation that sees `connectStarted` is
                // ordered after it on the loop. `connect` only queues work for the loop thread, which is
                // not this one, so no callback can need the lock meanwhile.
                let failure = state.withLock { state -> (any Error)? in
                    if waiter.cancelled { return CancellationError() }
                    do {
                        try start(socket)
                    } catch {
                        return error
                    }
                    waiter.continuation = continuation
                    state.connect = waiter
                    state.connectStarted = true
                    return nil
                }
                if let failure { continuation.resume(throwing: failure) }
            }
        } onCancel: {
            let abandon = state.withLock { state -> Bool in
                waiter.cancelled = true
                return state.connectStarted && state.connect === waiter
            }
            if abandon { socket.disconnect() }
        }
    }

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        connected(sock)
    }

    func socket(_ sock: TCPSocket, didConnectToUrl url: URL) {
        connected(sock)
    }

    private func connected(_ sock: TCPSocket) {
        // On the loop thread, inline: the socket cannot have disconnected since it connected.
        let addresses = ConnectedAddresses(local: sock.localAddress, remote: sock.connectedAddress)
        locked { state, effects in
            guard let waiter = state.connect, !waiter.cancelled else { return }  // a cancel's disconnect follows
            state.connect = nil
            if let continuation = waiter.take() {
                effects.append { continuation.resume(returning: addresses) }
            }
        }
    }

    // MARK: Reading

    func read(_ kind: AsyncReadKind, timeout: Duration?) async throws -> Data {
        try Task.checkCancellation()
        let ticket = AsyncReadTicket(kind: kind, timeout: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                locked { state, effects in
                    guard !ticket.waiter.cancelled else {
                        effects.append { continuation.resume(throwing: CancellationError()) }
                        return
                    }
                    ticket.waiter.continuation = continuation
                    state.readsQueued += 1
                    ticket.number = state.readsQueued
                    state.readers.append(ticket)
                    serveReaders(&state, &effects)
                }
            }
        } onCancel: {
            locked { state, effects in
                guard let continuation = ticket.waiter.cancel() else { return }
                ticket.timer?.cancel()
                state.readers.removeAll { $0 === ticket }
                effects.append { continuation.resume(throwing: CancellationError()) }
                // The next read may now be the current one, or be met by bytes already received.
                serveReaders(&state, &effects)
            }
        }
    }

    /// Why reads that the received bytes cannot satisfy fail now, or nil while more bytes may come.
    private func readEndError(_ state: State) -> SocketError? {
        if state.closeRequested { return .connectionClosed }
        if let ended = state.ended { return ended }
        if let failure = state.localFailure { return failure }
        return state.readStreamClosed ? .closedByPeer : nil
    }

    private func finish(_ ticket: AsyncReadTicket, _ result: Result<Data, SocketError>, _ effects: inout AsyncEffects) {
        ticket.timer?.cancel()
        ticket.timer = nil
        guard let continuation = ticket.waiter.take() else { return }
        effects.append { continuation.resume(with: result) }
    }

    /// Completes the reads at the head of the queue that the received bytes satisfy, in order; fails the
    /// ones that can no longer complete; then makes sure the current read has its timer running and a
    /// socket read bringing it bytes. Under the lock.
    private func serveReaders(_ state: inout State, _ effects: inout AsyncEffects) {
        while let head = state.readers.first {
            switch state.received.match(head.kind, scanned: head.scanned) {
            case .complete(let length):
                state.readers.removeFirst()
                finish(head, .success(state.received.take(length)), &effects)
                continue
            case .maxedOut(let maxLength):
                if readEndError(state) == nil {
                    // As a TCPSocket read to a delimiter does: the connection closes.
                    state.localFailure = .readMaxedOut(maxLength: maxLength)
                    effects.append { [socket] in socket.disconnect() }
                }
            case .needMore(let scanned):
                head.scanned = scanned
            }
            if let error = readEndError(state) {
                state.readers.removeFirst()
                finish(head, .failure(error), &effects)
                continue
            }
            if let timeout = head.timeout, head.timer == nil {
                head.timer = socket.eventLoop.scheduleTask(in: timeout) { [weak self] in self?.readTimedOut(head) }
            }
            if state.socketRead == nil {
                state.socketReadsIssued += 1
                let tag = state.socketReadsIssued
                state.socketRead = tag
                let wanted = head.kind.bytesWanted(received: state.received.count)
                // 0 asks the socket for everything it has.
                let maxLength = wanted >= Int(UInt32.max) ? 0 : UInt(wanted)
                effects.append { [socket] in socket.readData(withTimeout: -1, maxLength: maxLength, tag: tag) }
            }
            return
        }
    }

    private func readTimedOut(_ ticket: AsyncReadTicket) {
        locked { state, effects in
            guard ticket.waiter.continuation != nil, state.readers.first === ticket, readEndError(state) == nil else { return }
            state.localFailure = .readTimeout(tag: ticket.number)
            effects.append { [socket] in socket.disconnect() }
            serveReaders(&state, &effects)
        }
    }

    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        locked { state, effects in
            guard state.socketRead == tag else { return }
            state.socketRead = nil
            guard !state.closeRequested else { return }
            // Usually the chunk is exactly what the current read needs: hand it over without copying.
            if state.received.isEmpty, let head = state.readers.first,
               data.withUnsafeBytes({ head.kind.match($0, scanned: 0) }) == .complete(length: data.count) {
                state.readers.removeFirst()
                finish(head, .success(data), &effects)
            } else {
                state.received.append(data)
            }
            serveReaders(&state, &effects)
        }
    }

    func socket(_ sock: TCPSocket, didRejectReadWithTag tag: Int, error: SocketError) {
        locked { state, effects in
            guard state.socketRead == tag else { return }
            state.socketRead = nil
            if error == .closedByPeer {
                // A read of available bytes is refused so only once the peer's bytes are all taken.
                readStreamDidClose(&state, &effects)
            } else if readEndError(state) == nil, let head = state.readers.first {
                state.readers.removeFirst()
                finish(head, .failure(error), &effects)
            }
            serveReaders(&state, &effects)
        }
    }

    func socketDidCloseReadStream(_ sock: TCPSocket) {
        locked { state, effects in
            readStreamDidClose(&state, &effects)
            serveReaders(&state, &effects)
        }
    }

    private func readStreamDidClose(_ state: inout State, _ effects: inout AsyncEffects) {
        guard !state.readStreamClosed else { return }
        state.readStreamClosed = true
        for waiter in state.readStreamWaiters {
            if let continuation = waiter.take() { effects.append { continuation.resume() } }
        }
        state.readStreamWaiters = []
    }

    /// Waits until the peer has closed its side and every byte it sent has been taken from the socket;
    /// throws the connection's error when it ends otherwise.
    func waitUntilReadStreamClosed() async throws {
        try Task.checkCancellation()
        let waiter = AsyncWaiter<Void>()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                locked { state, effects in
                    if waiter.cancelled {
                        effects.append { continuation.resume(throwing: CancellationError()) }
                    } else if state.readStreamClosed && !state.closeRequested {
                        effects.append { continuation.resume() }
                    } else if let error = state.closeRequested ? .connectionClosed : state.ended {
                        effects.append { continuation.resume(throwing: error) }
                    } else {
                        waiter.continuation = continuation
                        state.readStreamWaiters.append(waiter)
                    }
                }
            }
        } onCancel: {
            locked { state, effects in
                guard let continuation = waiter.cancel() else { return }
                state.readStreamWaiters.removeAll { $0 === waiter }
                effects.append { continuation.resume(throwing: CancellationError()) }
            }
        }
    }

    // MARK: Writing

    /// Why writes fail now, or nil.
    private func writeEndError(_ state: State) -> SocketError? {
        if state.writeCloseRequested { return .badConfig("the write stream is closed") }
        if state.closeRequested { return .connectionClosed }
        return state.ended ?? state.localFailure
    }

    func write(_ data: Data, timeout: TimeInterval) async throws {
        try Task.checkCancellation()
        let waiter = AsyncWaiter<Void>()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let tag = locked { state, effects -> Int? in
                    if waiter.cancelled {
                        effects.append { continuation.resume(throwing: CancellationError()) }
                    } else if let error = writeEndError(state) {
                        effects.append { continuation.resume(throwing: error) }
                    } else if data.isEmpty {
                        effects.append { continuation.resume() }
                    } else {
                        waiter.continuation = continuation
                        state.writesQueued += 1
                        state.writes[state.writesQueued] = waiter
                        return state.writesQueued
                    }
                    return nil
                }
                if let tag { socket.write(data, withTimeout: timeout, tag: tag) }
            }
        } onCancel: {
            locked { state, effects in
                // The bytes stay queued on the socket: they cannot be taken back.
                if let continuation = waiter.cancel() {
                    effects.append { continuation.resume(throwing: CancellationError()) }
                }
            }
        }
    }

    func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) {
        writeEnded(tag, nil)
    }

    func socket(_ sock: TCPSocket, didRejectWriteWithTag tag: Int, error: SocketError) {
        writeEnded(tag, error)
    }

    private func writeEnded(_ tag: Int, _ error: SocketError?) {
        locked { state, effects in
            guard let waiter = state.writes.removeValue(forKey: tag) else { return }
            if let continuation = waiter.take() {
                if let error {
                    effects.append { continuation.resume(throwing: error) }
                } else {
                    effects.append { continuation.resume() }
                }
            }
            if state.writes.isEmpty { releaseCloseWriteWaiters(&state, &effects) }
        }
    }

    /// Half-closes once the writes queued so far are sent, then returns (after the `shutdown(2)`, or
    /// when the connection ends, or when the task is cancelled).
    func closeWrite() async {
        let proceed = locked { state, _ -> Bool in
            guard !state.closeRequested, state.ended == nil else { return false }
            state.writeCloseRequested = true
            return true
        }
        guard proceed, !Task.isCancelled else { return }
        socket.closeWriteStreamAfterWriting()
        let waiter = AsyncWaiter<Void>()
        _ = try? await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                locked { state, effects in
                    if waiter.cancelled || state.closeRequested || state.ended != nil {
                        effects.append { continuation.resume() }
                        return
                    }
                    waiter.continuation = continuation
                    state.closeWriteWaiters.append(waiter)
                    if state.writes.isEmpty { releaseCloseWriteWaiters(&state, &effects) }
                }
            }
        } onCancel: {
            locked { state, effects in
                guard let continuation = waiter.cancel() else { return }
                state.closeWriteWaiters.removeAll { $0 === waiter }
                effects.append { continuation.resume() }
            }
        }
    }

    /// Resumes the ``closeWrite()`` calls once the socket has shut the write side down: the socket does
    /// so right after its last write completes, in the same turn of its loop (or in the task
    /// ``TCPSocket/closeWriteStreamAfterWriting()`` queued), so a task queued on the loop now runs after it.
    private func releaseCloseWriteWaiters(_ state: inout State, _ effects: inout AsyncEffects) {
        guard !state.closeWriteWaiters.isEmpty else { return }
        let continuations = state.closeWriteWaiters.compactMap { $0.take() }
        state.closeWriteWaiters = []
        effects.append { [socket] in
            socket.eventLoop.execute { for continuation in continuations { continuation.resume() } }
        }
    }

    // MARK: Ending

    /// Closes the connection at once and returns once the socket has reported the disconnect.
    func close() async {
        let alreadyEnded = locked { state, effects -> Bool in
            if !state.closeRequested {
                state.closeRequested = true
                state.received.removeAll()
                failPendingCalls(with: .connectionClosed, &state, &effects)
            }
            return state.ended != nil
        }
        guard !alreadyEnded else { return }
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool in
                if state.ended != nil { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if ended {
                continuation.resume()
            } else {
                socket.disconnect()
            }
        }
    }

    /// Fails every waiting write and read-stream wait with `error`, and the reads that the received
    /// bytes cannot satisfy.
    private func failPendingCalls(with error: SocketError, _ state: inout State, _ effects: inout AsyncEffects) {
        for waiter in state.writes.values {
            if let continuation = waiter.take() { effects.append { continuation.resume(throwing: error) } }
        }
        for waiter in state.readStreamWaiters {
            if let continuation = waiter.take() {
                if state.readStreamClosed && !state.closeRequested {
                    effects.append { continuation.resume() }
                } else {
                    effects.append { continuation.resume(throwing: error) }
                }
            }
        }
        state.readStreamWaiters = []
        serveReaders(&state, &effects)
    }

    func socketWillDisconnect(_ sock: TCPSocket, unreadData: Data, unsentWriteTags: [Int]) {
        // Bytes the socket received that no read took stay readable: nothing received is lost.
        locked { state, _ in
            if !state.closeRequested && !unreadData.isEmpty { state.received.append(unreadData) }
        }
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        locked { state, effects in
            if let waiter = state.connect {
                // The connect failed, or was abandoned by cancellation.
                state.connect = nil
                state.ended = err ?? .connectionClosed
                if let continuation = waiter.take() {
                    let error: any Error = waiter.cancelled ? CancellationError() : (err ?? SocketError.connectionClosed)
                    effects.append { continuation.resume(throwing: error) }
                }
                return
            }
            guard state.ended == nil else { return }
            let error: SocketError
            if let failure = state.localFailure {
                error = failure
            } else if let err {
                error = err
            } else {
                // Without an error: our close(), or both directions closed after a half-close.
                error = state.closeRequested ? .connectionClosed : .closedByPeer
            }
            state.ended = error
            if error == .closedByPeer { readStreamDidClose(&state, &effects) }
            failPendingCalls(with: error, &state, &effects)
            state.writes = [:]
            releaseCloseWriteWaiters(&state, &effects)
            let closeWaiters = state.closeWaiters
            state.closeWaiters = []
            effects.append { for continuation in closeWaiters { continuation.resume() } }
        }
    }
}

extension SocketError {
    /// What the calls of a ``TCPConnection`` throw after ``TCPConnection/close()``, and what a connect
    /// abandoned without an error throws: a ``SocketError/badConfig(_:)`` saying the connection was closed.
    public static let connectionClosed = SocketError.badConfig("the connection was closed")
}
