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
        try await waitUntil(\.secureWaiters) { $0.secured && !$0.closeRequested && $0.ended == nil }
    }

    func socketDidSecure(_ sock: TCPSocket) {
        locked { state, effects in
            state.secured = true
            Self.resumeAll(\.secureWaiters, &state, &effects)
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
