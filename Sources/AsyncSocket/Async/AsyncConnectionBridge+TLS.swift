import Foundation

/// TLS for ``TCPConnection``: the socket's ``TCPSocket/startTLS(_:)``, awaited.
extension AsyncConnectionBridge {
    /// Starts TLS with `settings` (a barrier behind the reads and writes called so far) and waits for
    /// the handshake; `evaluator`, if given, decides on the server's certificate.
    func startTLS(_ settings: TLSConfiguration, evaluatingTrust evaluator: (@Sendable (TLSPeerTrust) async -> Bool)?) async throws {
        try Task.checkCancellation()
        var settings = settings
        if let evaluator {
            settings.manuallyEvaluatesTrust = true
            locked { state, _ in state.trustEvaluator = evaluator }
        }
        socket.startTLS(settings)
        try await waitUntilSecure()
    }

    /// Waits for ``TCPSocketDelegate/socketDidSecure(_:)``; throws the connection's end (the
    /// handshake's ``SocketError/tls(_:)``) or `CancellationError` (the handshake goes on).
    func waitUntilSecure() async throws {
        try Task.checkCancellation()
        let waiter = AsyncWaiter<Void>()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                locked { state, effects in
                    if waiter.cancelled {
                        effects.append { continuation.resume(throwing: CancellationError()) }
                    } else if state.secured, !state.closeRequested, state.ended == nil {
                        effects.append { continuation.resume() }
                    } else if let error = state.closeRequested ? .connectionClosed : state.ended {
                        effects.append { continuation.resume(throwing: error) }
                    } else {
                        waiter.continuation = continuation
                        state.secureWaiters.append(waiter)
                    }
                }
            }
        } onCancel: {
            locked { state, effects in
                guard let continuation = waiter.cancel() else { return }
                state.secureWaiters.removeAll { $0 === waiter }
                effects.append { continuation.resume(throwing: CancellationError()) }
            }
        }
    }

    func socketDidSecure(_ sock: TCPSocket) {
        locked { state, effects in
            state.secured = true
            for waiter in state.secureWaiters {
                if let continuation = waiter.take() { effects.append { continuation.resume() } }
            }
            state.secureWaiters = []
        }
    }

    func socket(_ sock: TCPSocket, didReceiveTrust trust: TLSPeerTrust, completionHandler: @escaping @Sendable (Bool) -> Void) {
        guard let evaluator = locked({ state, _ in state.trustEvaluator }) else {
            completionHandler(false)
            return
        }
        Task { completionHandler(await evaluator(trust)) }
    }
}
