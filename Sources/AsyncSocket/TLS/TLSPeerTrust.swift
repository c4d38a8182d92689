import Foundation

/// What a client learns about the server during a handshake with
/// ``TLSConfiguration/manuallyEvaluatesTrust``, for the app to decide on
/// (``TCPSocketDelegate/socket(_:didReceiveTrust:completionHandler:)``, GCDAsyncSocket's
/// `socket:didReceiveTrust:completionHandler:` with its `SecTrustRef`).
public struct TLSPeerTrust: Sendable, Hashable {
    /// The certificates the server sent, leaf first, each DER-encoded (X.509, RFC 5280).
    public let certificateChain: [Data]
    /// The name the certificate was checked against (``TLSConfiguration/peerName``).
    public let peerName: String?
    /// What OpenSSL's own verification found, as the handshake without manual trust would have
    /// failed: nil when the chain leads to ``TLSConfiguration/trustRoots``, is within its dates and
    /// (with ``TLSConfiguration/CertificateVerification/fullVerification``) names ``peerName``;
    /// otherwise ``TLSError/certificateUntrusted(_:)``, ``TLSError/certificateExpired(_:)`` or
    /// ``TLSError/hostnameMismatch(expected:)``. A self-signed certificate the app knows reads as untrusted here.
    public let verificationError: TLSError?
    /// The SHA-256 (32 bytes) of the leaf's DER SubjectPublicKeyInfo: the value
    /// ``TLSConfiguration/pinnedPublicKeys`` holds, for an app that pins by itself.
    public let publicKeySHA256: Data

    /// True when OpenSSL's verification found nothing wrong (``verificationError`` is nil).
    public var isTrustedByDefault: Bool { verificationError == nil }

    /// A trust value (for tests and for apps wrapping the handshake).
    public init(certificateChain: [Data], peerName: String?, verificationError: TLSError?, publicKeySHA256: Data) {
        self.certificateChain = certificateChain
        self.peerName = peerName
        self.verificationError = verificationError
        self.publicKeySHA256 = publicKeySHA256
    }
}
