import COpenSSL
import Foundation

/// One connection's TLS session as a stage of its byte path: OpenSSL with a BIO of our own whose
/// reads take from ``incomingCiphertext`` and whose writes append to ``pendingCiphertext``, so the
/// socket keeps doing its own I/O, with no copy through an OpenSSL memory BIO on either side, and an
/// idle connection holds no ciphertext buffer. Ciphertext from the kernel goes into
/// ``incomingCiphertext`` (read into its room, or ``feed(_:)``); plaintext comes out of
/// ``read(into:)``; plaintext to send goes in with ``write(_:)``; ciphertext to send (the handshake's,
/// the records', alerts) collects in ``pendingCiphertext`` for the socket to write.
///
/// ```
/// kernel ──read──▶ incomingCiphertext ──BIO read──▶ SSL_read ──▶ plaintext ──▶ read buffer / requests
/// kernel ◀─write── pendingCiphertext ◀──BIO write── SSL_write ◀── plaintext ◀── write queue
/// ```
///
/// Loop thread only (hence unchecked `Sendable`).
final class TLSStage: @unchecked Sendable {
    let context: TLSContext
    /// The `SSL *`; it owns the BIO.
    private let ssl: OpaquePointer
    /// Where a client's session is kept for resumption: its peer name and the server's address.
    let sessionKey: String?
    /// Ciphertext produced and not yet written to the kernel.
    var pendingCiphertext = ReadBuffer()
    /// Ciphertext received and not yet taken by OpenSSL (at most part of a record, once read through).
    var incomingCiphertext = ReadBuffer()
    private(set) var isHandshakeDone = false

    /// What a read of plaintext found.
    enum ReadOutcome: Equatable {
        /// `count` bytes of plaintext.
        case bytes(Int)
        /// No whole record yet: more ciphertext is needed.
        case needMore
        /// The peer's close_notify: no more plaintext will come.
        case closed
    }

    /// A session for one connection with `context`'s settings; a client's checks `peerName` and, with
    /// `sessionKey` (the server's address), offers the session its last connection there got.
    init(context: TLSContext, sessionKey: String? = nil) throws(TLSError) {
        self.context = context
        self.sessionKey = context.configuration.role == .client ? sessionKey.map { "\(context.configuration.peerName ?? "")|\($0)" } : nil
        TLSContext.clearErrors()
        guard let ssl = SSL_new(context.context) else { throw .badConfiguration("SSL_new: \(TLSContext.takeErrors())") }
        guard let bio = BIO_new(stageBIOMethod) else {
            SSL_free(ssl)
            throw .badConfiguration("BIO_new: \(TLSContext.takeErrors())")
        }
        // One BIO both ways: SSL_set_bio takes the one reference (SSL_set_bio(3)).
        SSL_set_bio(ssl, bio, bio)
        self.ssl = ssl
        let configuration = context.configuration
        if configuration.role == .client {
            SSL_set_connect_state(ssl)
            if let name = configuration.peerName, !name.isEmpty {
                let isAddress = SocketAddress(ipAddress: name, port: 0) != nil
                // SNI carries host names only (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not permitted").
                if !isAddress { _ = cssl_set_tlsext_host_name(ssl, name) }
                if configuration.certificateVerification == .fullVerification {
                    let param = SSL_get0_param(ssl)
                    let set = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(param, name) : SSL_set1_host(ssl, name)
                    // A throw from here on runs deinit (every stored property is set), which frees `ssl`.
                    guard set == 1 else { throw .badConfiguration("peer name \(name): \(TLSContext.takeErrors())") }
                }
            }
            if let key = self.sessionKey { context.offerSession(for: key, on: ssl) }
        } else {
            SSL_set_accept_state(ssl)
        }
        // The callbacks find the stage from the `SSL *` (app data, index 0) and from the BIO.
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { SSL_free(ssl) }

    /// The stage an `SSL *` belongs to (set at its creation).
    static func stage(of ssl: OpaquePointer) -> TLSStage? {
        SSL_get_ex_data(ssl, 0).map { Unmanaged<TLSStage>.fromOpaque($0).takeUnretainedValue() }
    }

    /// True when the handshake resumed an earlier session (no certificate exchange).
    var isSessionReused: Bool { SSL_session_reused(ssl) == 1 }

    /// Hands ciphertext to OpenSSL (copied into ``incomingCiphertext``; the socket reads the kernel
    /// straight into it instead).
    func feed(_ bytes: UnsafeRawBufferPointer) {
        incomingCiphertext.append(bytes)
    }

    /// Where a handshake stands after ``handshake()``.
    enum HandshakeProgress {
        /// Done: the peer is verified.
        case done
        /// Waiting for more from the peer.
        case needMore
        /// Paused for the app's decision on `trust` (``TLSConfiguration/manuallyEvaluatesTrust``);
        /// reported once; ``decideTrust(_:)`` and another ``handshake()`` go on.
        case awaitingTrust(TLSPeerTrust)
    }

    /// The app's part in a manual trust evaluation (``TLSConfiguration/manuallyEvaluatesTrust``).
    enum TrustDecision {
        case notAsked, asked, trusted, rejected
    }
    /// Read and set by the verification callback, and by ``decideTrust(_:)``.
    var trustDecision = TrustDecision.notAsked
    /// What the verification callback found, until ``handshake()`` hands it out.
    var pendingTrust: TLSPeerTrust?

    /// True while the handshake waits for the app's trust decision.
    var isAwaitingTrust: Bool { trustDecision == .asked }

    /// Records the app's answer; false when it had answered already (the answer is ignored).
    func decideTrust(_ trusted: Bool) -> Bool {
        guard trustDecision == .asked else { return false }
        trustDecision = trusted ? .trusted : .rejected
        return true
    }

    /// Ciphertext fed and not yet processed by OpenSSL, in bytes.
    var unprocessedCiphertext: Int { incomingCiphertext.count }

    /// Moves the handshake on with the ciphertext fed so far (nothing while it waits for the app).
    /// - Throws: why it failed (the alert for the peer is in ``pendingCiphertext``: send it).
    func handshake() throws(TLSError) -> HandshakeProgress {
        guard !isHandshakeDone else { return .done }
        guard !isAwaitingTrust else { return .needMore }
        TLSContext.clearErrors()
        let result = SSL_do_handshake(ssl)
        defer { releaseIncomingIfEmpty() }
        if result == 1 {
            isHandshakeDone = true
            return .done
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needMore
        case SSL_ERROR_WANT_RETRY_VERIFY:
            guard let trust = pendingTrust else { throw .handshakeFailed("the verification paused without a certificate") }
            pendingTrust = nil
            return .awaitingTrust(trust)
        default: throw handshakeError()
        }
    }

    /// Plaintext into `buffer`: as much as the records fed so far hold, up to its size.
    /// - Throws: ``TLSError/protocolError(_:)`` for records that do not decrypt or parse.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> ReadOutcome {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .needMore }
        TLSContext.clearErrors()
        let result = SSL_read(ssl, base, Int32(clamping: buffer.count))
        defer { releaseIncomingIfEmpty() }
        if result > 0 { return .bytes(Int(result)) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .needMore
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: throw .protocolError(TLSContext.takeErrors())
        }
    }

    /// Encrypts as much of `bytes` as OpenSSL takes now (with partial writes on, all of it, record
    /// by record) into ``pendingCiphertext``; returns how many plaintext bytes it took.
    func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        var taken = 0
        TLSContext.clearErrors()
        while taken < bytes.count {
            let result = SSL_write(ssl, base + taken, Int32(clamping: bytes.count - taken))
            if result > 0 {
                taken += Int(result)
                continue
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return taken
            default: throw .protocolError(TLSContext.takeErrors())
            }
        }
        return taken
    }

    /// Queues this side's close_notify alert in ``pendingCiphertext`` (once).
    func close() {
        guard isHandshakeDone, SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN == 0 else { return }
        TLSContext.clearErrors()
        _ = SSL_shutdown(ssl)
        TLSContext.clearErrors()
    }

    /// ``TLSError/pinMismatch`` when the settings pin public keys (``TLSConfiguration/pinnedPublicKeys``)
    /// and the peer's is none of them; nil otherwise. After the handshake.
    func pinningError() -> TLSError? {
        let pins = context.configuration.pinnedPublicKeys
        guard !pins.isEmpty else { return nil }
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return .pinMismatch(actual: "") }
        defer { X509_free(certificate) }
        let actual = TLSStage.publicKeySHA256(certificate)
        return pins.contains(actual) ? nil : .pinMismatch(actual: actual.base64EncodedString())
    }

    /// The SHA-256 of `certificate`'s DER SubjectPublicKeyInfo (32 bytes; empty if it cannot be encoded).
    static func publicKeySHA256(_ certificate: OpaquePointer) -> Data {
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der)
        guard length > 0, let der else { return Data() }
        defer { CRYPTO_free(der, #fileID, #line) }
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = SHA256(der, Int(length), &digest)
        return Data(digest)
    }

    /// The certificates the peer sent (a verification's untrusted chain, leaf first), DER each.
    static func derChain(_ store: OpaquePointer) -> [Data] {
        guard let stack = X509_STORE_CTX_get0_untrusted(store) else { return [] }
        return (0..<cssl_x509_stack_count(stack)).compactMap { index -> Data? in
            guard let certificate = cssl_x509_stack_value(stack, index) else { return nil }
            var der: UnsafeMutablePointer<UInt8>?
            let length = i2d_X509(certificate, &der)
            guard length > 0, let der else { return nil }
            defer { CRYPTO_free(der, #fileID, #line) }
            return Data(bytes: der, count: Int(length))
        }
    }

    /// The protocol the handshake agreed on with ALPN, if any.
    var negotiatedApplicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The cipher suite in use, by OpenSSL's name (empty before the handshake).
    var cipherSuite: String { SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? "" }

    /// The version in use: "TLSv1.3", "TLSv1.2".
    var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// After OpenSSL has read: an emptied ``incomingCiphertext`` lets its storage go (an idle
    /// connection keeps none).
    private func releaseIncomingIfEmpty() {
        if incomingCiphertext.isEmpty { incomingCiphertext.reset(keepingCapacity: false) }
    }

    /// The typed reason of a failed handshake: the certificate check's result when it failed, else
    /// OpenSSL's reason.
    private func handshakeError() -> TLSError {
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK {
            TLSContext.clearErrors()
            return verificationError(Int32(verify))
        }
        let reason = TLSContext.takeErrors()
        if reason.contains("peer did not return a certificate") || reason.contains("certificate required") {
            return .certificateRequired
        }
        if reason.contains("unsupported protocol") || reason.contains("protocol version") || reason.contains("no protocols available") {
            return .unsupportedVersion(reason)
        }
        return .handshakeFailed(reason)
    }

    /// The typed reason for an X.509 verification result (`X509_V_ERR_…`, not `X509_V_OK`).
    func verificationError(_ code: Int32) -> TLSError {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
            return .certificateExpired(String(cString: X509_verify_cert_error_string(Int(code))))
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return .hostnameMismatch(expected: context.configuration.peerName ?? "")
        case X509_V_ERR_APPLICATION_VERIFICATION:
            return .certificateUntrusted("the app did not trust it")
        default:
            return .certificateUntrusted(String(cString: X509_verify_cert_error_string(Int(code))))
        }
    }
}

/// The BIO of every stage (`BIO_meth_new`, a source/sink like a memory BIO): reads take from the
/// stage's ``TLSStage/incomingCiphertext`` (none left: "retry", as a memory BIO with no EOF says),
/// writes append to its ``TLSStage/pendingCiphertext``.
nonisolated(unsafe) private let stageBIOMethod: OpaquePointer = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "swift-async-socket TLS stage") else {
        fatalError("BIO_meth_new failed: \(TLSContext.takeErrors())")  // out of memory at start-up
    }
    _ = BIO_meth_set_write(method, stageBIOWrite)
    _ = BIO_meth_set_read(method, stageBIORead)
    _ = BIO_meth_set_ctrl(method, stageBIOControl)
    _ = BIO_meth_set_create(method) { bio in
        BIO_set_init(bio, 1)
        return 1
    }
    _ = BIO_meth_set_destroy(method) { _ in 1 }
    return method
}()

private func stage(of bio: OpaquePointer?) -> TLSStage? {
    guard let bio, let data = BIO_get_data(bio) else { return nil }
    return Unmanaged<TLSStage>.fromOpaque(data).takeUnretainedValue()
}

private func stageBIOWrite(_ bio: OpaquePointer?, _ bytes: UnsafePointer<CChar>?, _ length: Int32) -> Int32 {
    guard let bio, let stage = stage(of: bio), let bytes, length > 0 else { return 0 }
    cssl_bio_clear_retry_flags(bio)
    stage.pendingCiphertext.append(UnsafeRawBufferPointer(start: bytes, count: Int(length)))
    return length
}

private func stageBIORead(_ bio: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ length: Int32) -> Int32 {
    guard let bio, let stage = stage(of: bio), let buffer, length > 0 else { return 0 }
    cssl_bio_clear_retry_flags(bio)
    let count = min(Int(length), stage.incomingCiphertext.count)
    guard count > 0 else {
        cssl_bio_set_retry_read(bio)
        return -1
    }
    stage.incomingCiphertext.withUnsafeReadableBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: count)
    }
    stage.incomingCiphertext.consume(count)
    return Int32(count)
}

private func stageBIOControl(_ bio: OpaquePointer?, _ command: Int32, _ number: Int, _ pointer: UnsafeMutableRawPointer?) -> Int {
    switch command {
    case BIO_CTRL_FLUSH: return 1
    case BIO_CTRL_PENDING: return stage(of: bio)?.incomingCiphertext.count ?? 0
    case BIO_CTRL_WPENDING: return 0  // written through to pendingCiphertext at once
    default: return 0
    }
}
