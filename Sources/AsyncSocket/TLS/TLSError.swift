/// Why TLS failed on a connection (``SocketError/tls(_:)``), in words: OpenSSL's reason strings and
/// X.509 verification results (`X509_verify_cert_error_string`), never a bare error number.
public enum TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The settings cannot be used: a file that does not load, a key that does not match its
    /// certificate, a client with full verification and no ``TLSConfiguration/peerName``.
    case badConfiguration(String)
    /// The peer's certificate does not chain to a trusted root (unknown CA, self-signed, bad
    /// signature): OpenSSL's verification result.
    case certificateUntrusted(String)
    /// The peer's certificate (or one of its chain) is past its validity dates, or not yet valid.
    case certificateExpired(String)
    /// The peer's certificate does not name ``TLSConfiguration/peerName`` (RFC 6125).
    case hostnameMismatch(expected: String)
    /// A server that requires a client certificate got none (``TLSConfiguration/ClientCertificates/require``).
    case certificateRequired
    /// The peer offered only protocol versions this side does not accept (TLS 1.0 or 1.1, say, against
    /// the default minimum TLS 1.2).
    case unsupportedVersion(String)
    /// Any other handshake failure, with OpenSSL's reason (`handshake failure`, `wrong version
    /// number` for a peer that does not speak TLS, an alert the peer sent).
    case handshakeFailed(String)
    /// The peer's public key is not one of ``TLSConfiguration/pinnedPublicKeys``; `actual` is the
    /// base64 of its SHA-256 (empty when the peer sent no certificate).
    case pinMismatch(actual: String)
    /// The handshake did not finish within ``TLSConfiguration/handshakeTimeout``.
    case handshakeTimeout
    /// The connection ended without the peer's close_notify alert, mid-handshake or after (a
    /// truncation attack is indistinguishable from a crash).
    case unexpectedEOF
    /// After the handshake, the records received cannot be decrypted or parsed (bad MAC, garbage).
    case protocolError(String)

    public var description: String {
        switch self {
        case .badConfiguration(let reason): return "TLS settings: \(reason)"
        case .certificateUntrusted(let reason): return "certificate untrusted: \(reason)"
        case .certificateExpired(let reason): return "certificate expired: \(reason)"
        case .hostnameMismatch(let expected): return "certificate does not name \(expected)"
        case .certificateRequired: return "a client certificate is required"
        case .unsupportedVersion(let reason): return "TLS version not accepted: \(reason)"
        case .handshakeFailed(let reason): return "TLS handshake failed: \(reason)"
        case .pinMismatch(let actual): return "the peer's public key (SHA-256 \(actual)) is not pinned"
        case .handshakeTimeout: return "TLS handshake timed out"
        case .unexpectedEOF: return "the peer closed without TLS close_notify"
        case .protocolError(let reason): return "TLS error: \(reason)"
        }
    }
}
