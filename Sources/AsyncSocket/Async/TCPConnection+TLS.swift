import Foundation

extension TCPConnection {
    /// Secures the connection with TLS (OpenSSL 3) and returns once the handshake is done and the
    /// peer verified: ``TCPSocket/startTLS(_:)`` awaited. It is a barrier: reads and writes called
    /// before it complete in plaintext first (write "STARTTLS", then call this, and the line goes out
    /// before the ClientHello); those called after it wait for the handshake and go through TLS. Bytes
    /// received and not read when the handshake starts are taken as the peer's first TLS bytes.
    ///
    /// - Parameters:
    ///   - settings: the role, certificates and checks (``TLSConfiguration``).
    ///   - evaluator: on a client, decides whether to trust the server once its certificates are in
    ///     (``TLSConfiguration/manuallyEvaluatesTrust``, set for you): `true` goes on, `false` fails
    ///     the handshake with ``TLSError/certificateUntrusted(_:)``. Runs in a task of its own; the
    ///     handshake (and its timeout) waits for it. `nil`: OpenSSL's verification decides.
    /// - Throws: ``SocketError/tls(_:)`` with the handshake's failure (the connection has closed);
    ///   ``SocketError/badConfig(_:)`` when TLS was started on this connection before; the connection's
    ///   end; `CancellationError` when the task is cancelled (the handshake cannot be taken back: it
    ///   goes on, and later calls wait for it).
    public func startTLS(
        _ settings: TLSConfiguration, evaluatingTrust evaluator: (@Sendable (TLSPeerTrust) async -> Bool)? = nil
    ) async throws {
        try await bridge.startTLS(settings, evaluatingTrust: evaluator)
    }

    /// Returns once this connection's TLS handshake is done: for the connections of a listener with
    /// ``TCPListener/Options/tls``, which start their handshake at accept, to learn its outcome (and
    /// ``negotiatedApplicationProtocol``) before the first read. Returns at once when already secure.
    ///
    /// - Throws: the handshake's ``SocketError/tls(_:)`` or the connection's end (also when TLS was
    ///   never started and the connection ends); `CancellationError` (the handshake goes on).
    public func waitUntilSecure() async throws {
        try await bridge.waitUntilSecure()
    }

    /// True once the TLS handshake is done, until the connection ends. Any thread.
    public var isSecure: Bool { socket.isSecure }

    /// The ALPN protocol the handshake agreed on (``TLSConfiguration/applicationProtocols``), if any.
    public var negotiatedApplicationProtocol: String? { socket.negotiatedApplicationProtocol }

    /// The TLS version in use ("TLSv1.3", "TLSv1.2"), or nil without TLS.
    public var tlsProtocolVersion: String? { socket.tlsProtocolVersion }

    /// The cipher suite in use ("TLS_AES_128_GCM_SHA256"), or nil without TLS.
    public var tlsCipherSuite: String? { socket.tlsCipherSuite }

    /// True when the handshake resumed an earlier session to the same server (TLS session resumption).
    public var isTLSSessionReused: Bool { socket.isTLSSessionReused }

    /// `self` secured with `settings` (peer name defaulted to `peerName`), or as it is without settings.
    /// A failed or cancelled handshake closes the connection before throwing.
    func securedIfAsked(_ settings: TLSConfiguration?, peerName: String) async throws -> TCPConnection {
        guard var settings else { return self }
        if settings.role == .client, settings.peerName == nil { settings.peerName = peerName }
        do {
            try await startTLS(settings)
        } catch {
            await close()
            throw error
        }
        return self
    }
}
