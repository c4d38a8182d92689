import AsyncSocket
import Foundation
import SocketFraming

/// The delegate a ``WebSocketConnectionListener`` puts behind its ``WebSocketListener``: asks the
/// app's ``WebSocketConnectionListener/Options/shouldAccept`` closure, refuses with 503 while
/// ``WebSocketConnectionListener/Options/maxPendingConnections`` accepted connections wait for the
/// iteration, wraps each accepted ``WebSocket`` in a ``WebSocketConnection`` before it starts reading,
/// and hands it to a waiting `next()` or keeps it for the next one. State under one lock
/// (`LockedValue`); continuations resumed after it is released.
final class AsyncWebSocketListenerBridge: WebSocketListenerDelegate, @unchecked Sendable {
    /// One suspended `next()`: its continuation while it waits, and whether its task was cancelled
    /// before it could wait (guarded by the bridge's lock).
    final class Waiter: @unchecked Sendable {
        var continuation: CheckedContinuation<WebSocketConnection?, Never>?
        var cancelled = false
    }

    struct State {
        /// Accepted connections not handed out yet, oldest first (at most `maxPending`).
        var pending: [WebSocketConnection] = []
        /// `next()` calls waiting, oldest first (only while `pending` is empty).
        var waiters: [Waiter] = []
        /// The listener was closed: no more connections.
        var finished = false
        /// The last request accepted (its `Sec-WebSocket-Key`) and the subprotocol chosen for it, from
        /// `shouldAccept` to `didAccept`, which the listener calls one after the other.
        var accepted: (key: String, subprotocol: String?)?
    }

    let options: WebSocketConnectionListener.Options
    let state = LockedValue(State())

    init(options: WebSocketConnectionListener.Options) {
        self.options = options
    }

    // MARK: The iteration's side

    /// The oldest connection not handed out, waiting for one; nil once the listener is closed, or when
    /// the task is cancelled (the connections stay for other calls).
    func next() async -> WebSocketConnection? {
        if Task.isCancelled { return nil }
        let waiter = Waiter()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketConnection?, Never>) in
                let ready = state.withLock { state -> WebSocketConnection?? in
                    if waiter.cancelled || state.finished && state.pending.isEmpty { return .some(nil) }
                    if !state.pending.isEmpty { return state.pending.removeFirst() }
                    waiter.continuation = continuation
                    state.waiters.append(waiter)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                waiter.cancelled = true
                state.waiters.removeAll { $0 === waiter }
                defer { waiter.continuation = nil }
                return waiter.continuation
            }
            continuation?.resume(returning: nil)
        }
    }

    /// No more connections: the waiting `next()` calls return nil, and the connections not handed out
    /// are closed with 1001 (going away).
    func finish() {
        let (pending, continuations) = state.withLock { state in
            state.finished = true
            let continuations = state.waiters.compactMap { waiter in
                defer { waiter.continuation = nil }
                return waiter.continuation
            }
            defer { (state.pending, state.waiters) = ([], []) }
            return (state.pending, continuations)
        }
        for continuation in continuations { continuation.resume(returning: nil) }
        for connection in pending { Self.goAway(connection) }
    }

    /// Accepted connections waiting for the iteration (for tests).
    var pendingConnections: Int { state.withLock { $0.pending.count } }

    // MARK: The listener's side (its delegate queue)

    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        let decision = options.shouldAccept(request)
        guard case .accept(let subprotocol, _) = decision else { return decision }
        let full = state.withLock { state in
            state.accepted = (request.key, subprotocol.flatMap { request.subprotocols.contains($0) ? $0 : nil })
            return state.finished || state.waiters.isEmpty && state.pending.count >= options.maxPendingConnections
        }
        return full ? .refuse(statusCode: 503, text: "too many connections waiting to be served") : decision
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        let subprotocol = state.withLock { state in
            defer { state.accepted = nil }
            return state.accepted?.key == request.key ? state.accepted?.subprotocol : nil
        }
        let bridge = AsyncWebSocketBridge()
        WebSocketConnection.applyDefaultWatermarks(to: webSocket.socket)
        bridge.webSocket = webSocket  // its read gate and writability hook, before reading starts
        webSocket.delegate = bridge
        webSocket.reportsSends = false
        let connection = WebSocketConnection(webSocket: webSocket, bridge: bridge, subprotocol: subprotocol, request: request)
        // A waiting `next()` (whose continuation is set while it is in the list), the buffer, or, once
        // closed (between the two calls), a close.
        let handed = state.withLock { state -> CheckedContinuation<WebSocketConnection?, Never>?? in
            if state.finished { return nil }
            guard !state.waiters.isEmpty else {
                state.pending.append(connection)
                return .some(nil)
            }
            let waiter = state.waiters.removeFirst()
            defer { waiter.continuation = nil }
            return waiter.continuation
        }
        switch handed {
        case .some(let continuation?): continuation.resume(returning: connection)
        case .some(nil): break
        case nil: Self.goAway(connection)
        }
    }

    func listener(_ listener: WebSocketListener, didReceive request: HTTPRequestHead, on socket: TCPSocket) {
        guard let handler = options.httpRequestHandler else { return listener.answer(socket, HTTPResponse.upgradeRequired) }
        Task {
            let response = await handler(request)
            socket.write(Data(response.bytes), withTimeout: -1, tag: 0)
            socket.disconnectAfterWriting()
        }
    }

    /// Closes a connection nobody will take, keeping it alive until its closing handshake is done.
    private static func goAway(_ connection: WebSocketConnection) {
        Task { await connection.close(code: .goingAway, reason: "the server stopped accepting") }
    }
}
