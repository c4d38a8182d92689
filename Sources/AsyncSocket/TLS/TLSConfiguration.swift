import Foundation

/// What a TLS session of a ``TCPSocket`` (``TCPSocket/startTLS(_:)``) uses and checks, on OpenSSL 3.
///
/// The settings of GCDAsyncSocket's `startTLS:` dictionary map to these properties:
///
/// | GCDAsyncSocket key                       | here                                                      |
/// | ---------------------------------------- | --------------------------------------------------------- |
/// | `kCFStreamSSLIsServer`                    | ``role``                                                  |
/// | `kCFStreamSSLPeerName`                    | ``peerName`` (SNI and the name the certificate must carry) |
/// | `kCFStreamSSLCertificates`                | ``certificateChain`` and ``privateKey``                   |
/// | `GCDAsyncSocketManuallyEvaluateTrust`     | ``manuallyEvaluatesTrust`` (clients)                      |
/// | `GCDAsyncSocketSSLProtocolVersionMin/Max` | ``minimumVersion``, ``maximumVersion``                    |
/// | `GCDAsyncSocketSSLCipherSuites`           | ``cipherSuites``                                          |
/// | `GCDAsyncSocketSSLALPN`                   | ``applicationProtocols``                                  |
///
/// (The README's TLS section has the whole map, keys without a counterpart included.)
///
/// Secure by default: a client verifies the server's chain against the system's trust store
/// (``TrustRoots/system``) and its name against ``peerName`` (DNS names and IP addresses in the
/// subject alternative names, RFC 6125); TLS 1.2 at least; no compression, no renegotiation.
/// Turning verification off is spelled ``CertificateVerification/unsafeNoVerification``.
public struct TLSConfiguration: Sendable, Hashable {
    /// Which end of the handshake this side is.
    public enum Role: Sendable, Hashable {
        /// Sends the ClientHello; verifies the server (by default).
        case client
        /// Answers the ClientHello with ``TLSConfiguration/certificateChain``.
        case server
    }

    /// A protocol version, for ``TLSConfiguration/minimumVersion`` and ``TLSConfiguration/maximumVersion``.
    /// TLS 1.0 and 1.1 (RFC 8996 deprecates them) cannot be chosen.
    public enum Version: Sendable, Hashable, Comparable {
        /// TLS 1.2, RFC 5246.
        case tls12
        /// TLS 1.3, RFC 8446.
        case tls13
    }

    /// How the peer's certificate is checked.
    public enum CertificateVerification: Sendable, Hashable {
        /// The chain must lead to one of ``TLSConfiguration/trustRoots``, be within its validity dates,
        /// and (on a client) name ``TLSConfiguration/peerName``. The default.
        case fullVerification
        /// The chain is checked, the name is not: anyone with a certificate from a trusted CA can pose
        /// as the server. Unsafe.
        case unsafeNoHostnameVerification
        /// Nothing is checked: anyone can pose as the peer (encryption without authentication). Unsafe.
        case unsafeNoVerification
    }

    /// Where the certificates a chain must lead to come from.
    public enum TrustRoots: Sendable, Hashable {
        /// The operating system's store (OpenSSL's default paths: `/etc/ssl/certs` on Debian).
        case system
        /// The PEM certificates in these files only.
        case files([String])
        /// The PEM certificates in this data only.
        case pem(Data)
    }

    /// PEM text: in a file, or in memory.
    public enum PEMSource: Sendable, Hashable {
        /// A file holding PEM blocks.
        case file(String)
        /// PEM blocks in memory.
        case data(Data)
    }

    /// Whether a server asks the client for a certificate.
    public enum ClientCertificates: Sendable, Hashable {
        /// It does not (the default).
        case none
        /// It asks; a client without one may go on, one with an untrusted one may not.
        case request
        /// It asks, and refuses a client without a trusted certificate.
        case require
    }

    /// Client or server. Default ``Role/client``.
    public var role: Role
    /// The server's name: sent in the ClientHello (SNI, RFC 6066, when it is a DNS name, not an IP
    /// address) and checked against the server's certificate. Required on a client with
    /// ``CertificateVerification/fullVerification``.
    public var peerName: String?
    /// This side's certificate chain, leaf first (PEM). Required on a server.
    public var certificateChain: PEMSource?
    /// The private key of the leaf certificate (PEM, unencrypted). Required with ``certificateChain``.
    public var privateKey: PEMSource?
    /// The lowest version this side accepts. Default ``Version/tls12``.
    public var minimumVersion: Version = .tls12
    /// The highest version this side offers; `nil` (the default): the highest OpenSSL knows (TLS 1.3).
    public var maximumVersion: Version?
    /// How the peer's certificate is checked. Default ``CertificateVerification/fullVerification``
    /// (a server checks client certificates only with ``clientCertificates``).
    public var certificateVerification: CertificateVerification = .fullVerification
    /// What chains must lead to. Default ``TrustRoots/system``.
    public var trustRoots: TrustRoots = .system
    /// On a server: whether to ask for a client certificate. Default ``ClientCertificates/none``.
    public var clientCertificates: ClientCertificates = .none
    /// The cipher suites this side accepts, by OpenSSL's names, in order of preference: TLS 1.3 suites
    /// (`TLS_AES_128_GCM_SHA256`, `TLS_AES_256_GCM_SHA384`, `TLS_CHACHA20_POLY1305_SHA256`, RFC 8446
    /// §B.4) and TLS 1.2 ones (`ECDHE-ECDSA-AES128-GCM-SHA256`, …, as `openssl ciphers` lists them);
    /// a version none of whose suites is listed keeps OpenSSL's defaults for it. Empty (the default):
    /// OpenSSL's defaults (its `DEFAULT` list, no export, RC4 or NULL ciphers). An unknown name is
    /// ``TLSError/badConfiguration(_:)``.
    public var cipherSuites: [String] = []
    /// ALPN protocol names (RFC 7301) in order of preference, such as `["h2", "http/1.1"]`: a client
    /// offers them; a server picks the first of its own that the client offered (none: the handshake
    /// goes on without ALPN). Empty (the default): no ALPN.
    public var applicationProtocols: [String] = []
    /// Public keys the peer's certificate must carry one of (HPKP's pins, RFC 7469 §2.4): the
    /// SHA-256 of its DER SubjectPublicKeyInfo, 32 bytes each, as `openssl x509 -pubkey -noout |
    /// openssl pkey -pubin -outform der | openssl dgst -sha256 -binary` prints it. Checked after
    /// the chain (and name) verification, before ``TCPSocketDelegate/socketDidSecure(_:)``; a
    /// mismatch is ``TLSError/pinMismatch(actual:)``. Empty (the default): no pinning.
    public var pinnedPublicKeys: [Data] = []
    /// On a client: the app decides whether to trust the server (GCDAsyncSocket's
    /// `GCDAsyncSocketManuallyEvaluateTrust`). The handshake pauses once the server's certificates
    /// are in, the delegate gets ``TCPSocketDelegate/socket(_:didReceiveTrust:completionHandler:)``
    /// with what OpenSSL's own check found (``TLSPeerTrust``), and goes on when the app answers (from
    /// any thread): yes, and the handshake finishes (pins, if any, still checked) even if OpenSSL's
    /// check failed; no, and it fails with ``TLSError/certificateUntrusted(_:)``. Nothing is read or
    /// written through the session before the answer. The async API takes a closure instead
    /// (``TCPConnection/startTLS(_:evaluatingTrust:)``). Default false. A server cannot pause for
    /// client certificates (OpenSSL 3 can only retry a client's verification): true on a server is
    /// ``TLSError/badConfiguration(_:)``.
    public var manuallyEvaluatesTrust = false
    /// Seconds from the start of the handshake to its end; over it the connection closes with
    /// ``TLSError/handshakeTimeout``. Default 10; 0 for none. The time an app takes to answer
    /// ``manuallyEvaluatesTrust``'s question is not counted: the timer stops while it decides and
    /// starts again, from zero, at its answer.
    public var handshakeTimeout: TimeInterval = 10

    /// A client's settings: verify the server as `peerName`.
    public static func client(peerName: String?) -> TLSConfiguration {
        TLSConfiguration(role: .client, peerName: peerName)
    }

    /// A server's settings with its certificate chain and key.
    public static func server(certificateChain: PEMSource, privateKey: PEMSource) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .server, peerName: nil)
        configuration.certificateChain = certificateChain
        configuration.privateKey = privateKey
        return configuration
    }

    /// Settings for `role`, everything else at its default.
    public init(role: Role, peerName: String? = nil) {
        self.role = role
        self.peerName = peerName
    }
}
