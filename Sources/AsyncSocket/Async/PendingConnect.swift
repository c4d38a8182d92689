/// The connect an async type (``TCPConnection``, ``UDPEndpoint``) waits for, kept in its bridge's locked
/// state: the waiting task's ``AsyncWaiter`` and whether the socket's connect has started, so a
/// cancellation knows whether there is a connect to abandon.
struct PendingConnect<Value: Sendable> {
    fileprivate var waiter: AsyncWaiter<Value>?
    fileprivate var started = false

    /// The continuation to resume with the connect's outcome, taken once. Nil when nothing waits, and
    /// after a cancellation: abandoning the connect ends the socket, and the end resumes the task
    /// (``takeAtEnd()``).
    mutating func takeForOutcome() -> CheckedContinuation<Value, any Error>? {
        guard let waiter, !waiter.cancelled else { return nil }
        self.waiter = nil
        return waiter.take()
    }

    /// At the socket's end, while a connect is waited for: the continuation (taken once) and whether
    /// the wait was cancelled (then it is resumed with `CancellationError`); nil when nothing waits.
    mutating func takeAtEnd() -> (continuation: CheckedContinuation<Value, any Error>?, cancelled: Bool)? {
        guard let waiter else { return nil }
        self.waiter = nil
        return (waiter.take(), waiter.cancelled)
    }
}

extension LockedValue {
    /// Starts a connect with `start` while holding the lock, records it in `pending`, and waits until
    /// the bridge resumes it with the outcome. `start` only queues work for the socket's loop thread
    /// (never this one), so no callback can need the lock meanwhile; a cancellation that sees the
    /// connect started is therefore ordered after it on the loop, and calls `abandon` (which must end
    /// the socket: its end resumes the task with `CancellationError`).
    ///
    /// - Throws: `start`'s ``SocketError``, the connect's failure, or `CancellationError`.
    func awaitConnect<Connected: Sendable>(
        _ pending: WritableKeyPath<Value, PendingConnect<Connected>> & Sendable,
        start: () throws(SocketError) -> Void,
        abandon: @Sendable () -> Void
    ) async throws -> Connected {
        try Task.checkCancellation()
        let waiter = AsyncWaiter<Connected>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let failure = withLock { state -> (any Error)? in
                    if waiter.cancelled { return CancellationError() }
                    do {
                        try start()
                    } catch {
                        return error
                    }
                    waiter.continuation = continuation
                    state[keyPath: pending].waiter = waiter
                    state[keyPath: pending].started = true
                    return nil
                }
                if let failure { continuation.resume(throwing: failure) }
            }
        } onCancel: {
            let abandoning = withLock { state -> Bool in
                waiter.cancelled = true
                return state[keyPath: pending].started && state[keyPath: pending].waiter === waiter
            }
            if abandoning { abandon() }
        }
    }
}
