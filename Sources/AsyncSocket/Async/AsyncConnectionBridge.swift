import Synchronization
import Foundation

/// One ``TCPConnection`` read on its way through the socket's read queue. Its continuation is set
/// before the read is submitted and taken, once, on the socket's loop thread: by the read's completion
/// handler, or by a cancellation that withdraws the read (hence unchecked).
final class AsyncRead: @unchecked Sendable {
    let token = ReadToken()
    var continuation: CheckedContinuation<Data, any Error>?
    /// Set by the task's cancellation handler, on any thread, before it withdraws the read.
    let cancelled = Atomic(false)

    func resume(with result: Result<Data, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}

/// The delegate of a ``TCPConnection``'s socket, with the socket's ``TCPSocket/delegateQueue`` `nil`:
/// every callback runs inline on the socket's event-loop thread and resumes the waiting calls there.
///
/// Reads are the socket's own reads, queued with a completion handler instead of a delegate callback:
/// the same matching, timeouts and errors as delegate reads. A cancelled read is withdrawn from the
/// socket's queue, so the bytes it waited for stay for the reads after it.
///
/// Writes map one to one onto the socket's writes, tagged with their number.
final class AsyncConnectionBridge: TCPSocketDelegate, Sendable {
    /// The connection's own locked fields, beside the end and close the bridges share.
    struct Fields {
        // Connecting.
        var connect = PendingConnect<ConnectedAddresses>()

        // Reading.
        /// The peer sent FIN and the socket has no more bytes for us.
        var readStreamClosed = false
        var readStreamWaiters: [AsyncWaiter<Void>] = []

        // TLS.
        /// The socket reported ``TCPSocketDelegate/socketDidSecure(_:)``.
        var secured = false
        var secureWaiters: [AsyncWaiter<Void>] = []
        /// The app's trust decision for ``TCPConnection/startTLS(_:evaluatingTrust:)``.
        var trustEvaluator: (@Sendable (TLSPeerTrust) async -> Bool)?

        // Writing.
        /// Writes handed to the socket and not yet reported, by tag (their number). A cancelled write
        /// stays here, without a continuation, until the socket reports it.
        var writes: [Int: AsyncWaiter<Void>] = [:]
        var writesQueued = 0
        var writeCloseRequested = false
        var closeWriteWaiters: [AsyncWaiter<Void>] = []
    }

    /// The shared locked state: no elements (reads are the socket's own), this bridge's ``Fields``. Its
    /// `ended` is the error every call throws once the connection has ended (set by
    /// `socketDidDisconnect`); its `closeRequested`, that ``TCPConnection/close()`` was called, so nothing
    /// is readable any more.
    typealias Lock = AsyncBridgeLock<Never, Fields>
    typealias State = Lock.State

    struct ConnectedAddresses: Sendable {
        var local: SocketAddress?
        var remote: SocketAddress?
    }

    let socket: TCPSocket
    private let lock = Lock(Fields())
    /// Reads called so far; the number of each read is the tag of its ``SocketError/readTimeout(tag:)``.
    private let readsCalled = Atomic(0)

    /// A bridge for `socket`, which is about to connect or was just accepted. Make it the socket's
    /// delegate, with a `nil` delegate queue.
    init(socket: TCPSocket) {
        self.socket = socket
    }

    /// How many reads have been called so far (for tests).
    var readsQueued: Int { readsCalled.load(ordering: .relaxed) }

    /// How many received bytes wait for a read (for tests).
    var unreadBytes: Int { socket.bufferedReadBytes }

    @discardableResult
    func locked<Result>(_ body: (inout State, inout AsyncEffects) -> Result) -> Result {
        lock.locked(body)
    }

    // MARK: Connecting

    /// Starts the connect with `start` and waits for its outcome. Cancellation abandons the connect
    /// (``TCPSocket/disconnect()``) and throws `CancellationError`.
    func connect(_ start: (TCPSocket) throws(SocketError) -> Void) async throws -> ConnectedAddresses {
        try await lock.state.awaitConnect(
            \.extra.connect, start: { () throws(SocketError) in try start(socket) }, abandon: { [socket] in socket.disconnect() })
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
            // After a cancellation, the abandoning disconnect resumes the task.
            if let continuation = state.connect.takeForOutcome() {
                effects.append { continuation.resume(returning: addresses) }
            }
        }
    }

    // MARK: Reading

    /// Queues a read of `kind` on the socket and waits for it. Cancellation withdraws it: it throws
    /// `CancellationError` and consumes nothing.
    func read(_ kind: ReadRequest.Kind, timeout: Duration?) async throws -> Data {
        try Task.checkCancellation()
        // After close() the bytes left unread are discarded, even those of a connection that had ended.
        if lock.withLock({ $0.closeRequested }) { throw SocketError.connectionClosed }
        let read = AsyncRead()
        let number = readsCalled.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                read.continuation = continuation
                // Submitted from the loop, where a cancellation's withdrawal also runs: whichever comes
                // second sees the other.
                socket.onLoop { [self] in
                    if read.cancelled.load(ordering: .acquiring) {
                        read.resume(with: .failure(CancellationError()))
                        return
                    }
                    socket.read(
                        kind, timeout: asyncSeconds(timeout), tag: number, token: read.token,
                        readsLeftover: true
                    ) { [self] result in
                        read.resume(with: result.mapError { self.readError($0) })
                    }
                }
            }
        } onCancel: {
            read.cancelled.store(true, ordering: .releasing)
            socket.onLoop { [socket] in
                if socket.withdrawRead(read.token) { read.resume(with: .failure(CancellationError())) }
            }
        }
    }

    /// The error a read throws for the socket's `error`: after ``close()``, always
    /// ``SocketError/connectionClosed``.
    private func readError(_ error: SocketError) -> SocketError {
        lock.withLock { $0.closeRequested } ? .connectionClosed : error
    }

    func socketDidCloseReadStream(_ sock: TCPSocket) {
        locked { state, effects in readStreamDidClose(&state, &effects) }
    }

    private func readStreamDidClose(_ state: inout State, _ effects: inout AsyncEffects) {
        guard !state.readStreamClosed else { return }
        state.readStreamClosed = true
        Self.resumeAll(\.readStreamWaiters, &state, &effects)
    }

    /// Waits until the peer has closed its side and every byte it sent has been taken from the socket;
    /// throws the connection's error when it ends otherwise.
    func waitUntilReadStreamClosed() async throws {
        try await waitUntil(\.readStreamWaiters) { $0.readStreamClosed && !$0.closeRequested }
    }

    /// Waits in `waiters` until `done` holds (checked first, then on each resume), unless the
    /// connection has ended or close() was called: then it throws that (``SocketError/connectionClosed``
    /// after close()). Cancellation throws `CancellationError` and leaves the connection as it is.
    func waitUntil(
        _ waiters: WritableKeyPath<Fields, [AsyncWaiter<Void>]> & Sendable,
        _ done: @escaping (State) -> Bool
    ) async throws {
        try Task.checkCancellation()
        let waiter = AsyncWaiter<Void>()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                locked { state, effects in
                    if waiter.cancelled {
                        effects.append { continuation.resume(throwing: CancellationError()) }
                    } else if done(state) {
                        effects.append { continuation.resume() }
                    } else if let error = state.closeRequested ? .connectionClosed : state.ended {
                        effects.append { continuation.resume(throwing: error) }
                    } else {
                        waiter.continuation = continuation
                        state.extra[keyPath: waiters].append(waiter)
                    }
                }
            }
        } onCancel: {
            locked { state, effects in
                guard let continuation = waiter.cancel() else { return }
                state.extra[keyPath: waiters].removeAll { $0 === waiter }
                effects.append { continuation.resume(throwing: CancellationError()) }
            }
        }
    }

    /// Resumes every call waiting in `waiters`, normally (or with `error`), and empties the list.
    static func resumeAll(
        _ waiters: WritableKeyPath<Fields, [AsyncWaiter<Void>]>, throwing error: SocketError? = nil,
        _ state: inout State, _ effects: inout AsyncEffects
    ) {
        for waiter in state.extra[keyPath: waiters] {
            guard let continuation = waiter.take() else { continue }
            if let error {
                effects.append { continuation.resume(throwing: error) }
            } else {
                effects.append { continuation.resume() }
            }
        }
        state.extra[keyPath: waiters] = []
    }

    // MARK: Writing

    /// Why writes fail now, or nil.
    private func writeEndError(_ state: State) -> SocketError? {
        if state.writeCloseRequested { return .writeStreamClosed }
        if state.closeRequested { return .connectionClosed }
        return state.ended
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
        await lock.close(
            request: { state, effects in failPendingCalls(with: .connectionClosed, &state, &effects) },
            end: { socket.disconnect() })
    }

    /// Fails every waiting write and read-stream wait with `error`, and the reads that the received
    /// bytes cannot satisfy.
    private func failPendingCalls(with error: SocketError, _ state: inout State, _ effects: inout AsyncEffects) {
        for waiter in state.writes.values {
            if let continuation = waiter.take() { effects.append { continuation.resume(throwing: error) } }
        }
        let readStreamEnded = state.readStreamClosed && !state.closeRequested
        Self.resumeAll(\.readStreamWaiters, throwing: readStreamEnded ? nil : error, &state, &effects)
        Self.resumeAll(\.secureWaiters, throwing: error, &state, &effects)
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        locked { state, effects in
            if let (continuation, cancelled) = state.connect.takeAtEnd() {
                // The connect failed, or was abandoned by cancellation.
                state.ended = err ?? .connectionClosed
                if let continuation {
                    let error: any Error = cancelled ? CancellationError() : (err ?? SocketError.connectionClosed)
                    effects.append { continuation.resume(throwing: error) }
                }
                return
            }
            guard state.ended == nil else { return }
            let error: SocketError
            if let err {
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
            state.resumeCloseWaiters(&effects)
        }
    }
}
