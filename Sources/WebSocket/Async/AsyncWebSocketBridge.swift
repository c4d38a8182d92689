import AsyncSocket
import Foundation
import SocketFraming

/// The delegate a ``WebSocketConnection`` puts behind its ``WebSocket``: turns the callbacks into
/// resumed continuations, keeps at most ``highWater`` messages the app has not taken (reading pauses
/// there and resumes at ``lowWater``), and holds senders back while the socket's write queue is over
/// its high watermark. State under one lock (`LockedValue`, a `pthread_mutex_t`), continuations
/// resumed after it is released.
final class AsyncWebSocketBridge: WebSocketDelegate, @unchecked Sendable {
    /// Messages buffered before reading pauses: 64.
    static let highWater = 64
    /// Messages buffered when reading resumes: 16.
    static let lowWater = 16

    struct State {
        var opening: CheckedContinuation<(String?, [WebSocketExtension]), any Error>?
        /// How the opening handshake ended, when it ended before ``opened()`` waited for it.
        var opened: Result<(String?, [WebSocketExtension]), WebSocketConnectError>?
        var buffered: [WebSocketMessage] = []
        var reader: CheckedContinuation<WebSocketMessage?, Never>?
        var readPaused = false
        var writable = true
        var writers: [CheckedContinuation<Void, Never>] = []
        var closed: WebSocketCloseResult?
        var closeWaiters: [CheckedContinuation<WebSocketCloseResult, Never>] = []
    }

    let state = LockedValue(State())
    /// Set once, right after the socket is made (before it can call back); its read gate is
    /// ``State/readPaused``, asked on its loop.
    /// ``State/writable`` follows the write queue's watermarks from the loop itself
    /// (``WebSocket/writabilityChanged``), so a send that comes after the loop queued a message sees
    /// what that message did to the queue.
    weak var webSocket: WebSocket? {
        didSet {
            webSocket?.readGate = { [state] in state.withLock { $0.readPaused } }
            webSocket?.writabilityChanged = { [weak self] writable in self?.writabilityChanged(writable) }
        }
    }

    // MARK: The app's side

    /// Waits for the opening handshake (a client's connect).
    func opened() async throws -> (String?, [WebSocketExtension]) {
        try await withCheckedThrowingContinuation { continuation in
            let ended = state.withLock { state in
                if state.opened == nil { state.opening = continuation }
                return state.opened
            }
            if let ended { continuation.resume(with: ended) }
        }
    }

    /// The next message; nil once the connection is closed and every message was taken, or when the
    /// task is cancelled.
    func next() async -> WebSocketMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketMessage?, Never>) in
                let (ready, resume) = state.withLock { state -> (WebSocketMessage??, Bool) in
                    if !state.buffered.isEmpty {
                        let message = state.buffered.removeFirst()
                        let resume = state.readPaused && state.buffered.count <= Self.lowWater
                        if resume { state.readPaused = false }
                        return (.some(message), resume)
                    }
                    if state.closed != nil || Task.isCancelled { return (.some(nil), false) }
                    state.reader = continuation
                    return (nil, false)
                }
                if resume { webSocket?.resumeReading() }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            state.withLock { $0.reader.take() }?.resume(returning: nil)
        }
    }

    /// Waits while the write queue is over its high watermark; false once the connection is closed.
    func waitUntilWritable() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.closed == nil, !state.writable else { return true }
                state.writers.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        return state.withLock { $0.closed == nil }
    }

    /// Waits for the end.
    func closeResult() async -> WebSocketCloseResult {
        await withCheckedContinuation { continuation in
            let result = state.withLock { state -> WebSocketCloseResult? in
                if state.closed == nil { state.closeWaiters.append(continuation) }
                return state.closed
            }
            if let result { continuation.resume(returning: result) }
        }
    }

    // MARK: The socket's side (the delegate queue)

    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {
        opened(.success((subprotocol, extensions)))
    }

    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
        opened(.failure(error))
    }

    /// The opening handshake ended: to the waiting ``opened()``, or kept for it (the connect can end
    /// before the app's task waits).
    private func opened(_ result: Result<(String?, [WebSocketExtension]), WebSocketConnectError>) {
        let waiting = state.withLock { state in
            if state.opening == nil { state.opened = result }
            return state.opening.take()
        }
        waiting?.resume(with: result.mapError { $0 as any Error })
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        let reader = state.withLock { state -> CheckedContinuation<WebSocketMessage?, Never>? in
            if let reader = state.reader.take() { return reader }
            state.buffered.append(message)
            if state.buffered.count >= Self.highWater { state.readPaused = true }  // the socket's read gate
            return nil
        }
        reader?.resume(returning: message)
    }

    /// On the loop: the write queue went over its high watermark (false) or fell to its low one (true).
    private func writabilityChanged(_ writable: Bool) {
        let writers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.writable = writable
            guard writable else { return [] }
            defer { state.writers = [] }
            return state.writers
        }
        for writer in writers { writer.resume() }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        let (reader, writers, waiters) = state.withLock { state in
            state.closed = result
            defer {
                state.writers = []
                state.closeWaiters = []
            }
            return (state.reader.take(), state.writers, state.closeWaiters)
        }
        reader?.resume(returning: nil)
        for writer in writers { writer.resume() }
        for waiter in waiters { waiter.resume(returning: result) }
    }
}

extension Optional {
    /// The value, leaving nil behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
