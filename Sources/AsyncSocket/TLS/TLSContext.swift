import COpenSSL
import Foundation

/// An OpenSSL `SSL_CTX` built from one ``TLSConfiguration``: the certificates, keys and trust store
/// loaded once and shared by every connection that uses the same settings (a server's 10,000
/// connections share one). Immutable after creation, which OpenSSL allows to be used from any thread.
final class TLSContext: @unchecked Sendable {
    let configuration: TLSConfiguration
    /// The `SSL_CTX *`.
    let context: OpaquePointer
    /// ALPN protocol names in the wire format (RFC 7301 §3.1: each a length byte and the name), for the
    /// server's selection callback; empty without ALPN.
    let alpnWire: [UInt8]

    /// A client's sessions to resume (RFC 8446 §2.2, RFC 5077), by ``TLSStage/sessionKey``: the
    /// latest ticket or session each server gave (`SSL_SESSION *`, one reference each).
    private let sessions = LockedValue<[String: OpaquePointer]>([:])

    /// Contexts by configuration, so that ``TCPSocket/startTLS(_:)`` on many connections loads files once.
    private static let cache = LockedValue<[TLSConfiguration: TLSContext]>([:])

    /// The context for `configuration`, made on first use.
    static func shared(for configuration: TLSConfiguration) throws(TLSError) -> TLSContext {
        if let context = cache.withLock({ $0[configuration] }) { return context }
        let context = try TLSContext(configuration)
        return cache.withLock { cache in
            if let existing = cache[configuration] { return existing }
            cache[configuration] = context
            return context
        }
    }

    init(_ configuration: TLSConfiguration) throws(TLSError) {
        self.configuration = configuration
        if configuration.role == .client, configuration.certificateVerification == .fullVerification,
            configuration.peerName?.isEmpty ?? true
        {
            throw .badConfiguration("a client that verifies the server needs its name (peerName)")
        }
        if configuration.role == .server, configuration.certificateChain == nil || configuration.privateKey == nil {
            throw .badConfiguration("a server needs a certificate chain and its private key")
        }
        if configuration.role == .server, configuration.manuallyEvaluatesTrust {
            throw .badConfiguration("manual trust evaluation is for clients (OpenSSL cannot pause a server's verification)")
        }
        if let maximum = configuration.maximumVersion, maximum < configuration.minimumVersion {
            throw .badConfiguration("the maximum version is below the minimum")
        }
        TLSContext.clearErrors()
        guard let context = SSL_CTX_new(configuration.role == .client ? TLS_client_method() : TLS_server_method()) else {
            throw .badConfiguration("SSL_CTX_new: \(TLSContext.takeErrors())")
        }
        self.context = context
        alpnWire = configuration.applicationProtocols.flatMap { name -> [UInt8] in
            let bytes = Array(name.utf8.prefix(255))
            return [UInt8(bytes.count)] + bytes
        }
        // On a throw from here on, deinit runs (every stored property is set) and frees the context.
        try configure()
    }

    deinit {
        sessions.withLock { $0.values.forEach { SSL_SESSION_free($0) } }
        SSL_CTX_free(context)
    }

    /// Keeps `session` (taking over its reference) for the next connection to `key`.
    func storeSession(_ session: OpaquePointer, for key: String) {
        let previous = sessions.withLock { sessions in
            defer { sessions[key] = session }
            return sessions[key]
        }
        if let previous { SSL_SESSION_free(previous) }
    }

    /// Offers the session kept for `key`, if any, on `ssl` (a client about to handshake).
    func offerSession(for key: String, on ssl: OpaquePointer) {
        sessions.withLock { sessions in
            if let session = sessions[key] { _ = SSL_set_session(ssl, session) }  // SSL_set_session takes its own reference
        }
    }

    private func configure() throws(TLSError) {
        let configuration = self.configuration
        _ = cssl_set_min_proto_version(context, TLSContext.wireVersion(configuration.minimumVersion))
        if let maximum = configuration.maximumVersion { _ = cssl_set_max_proto_version(context, TLSContext.wireVersion(maximum)) }
        _ = cssl_ctx_set_options(context, cssl_default_options())
        // Idle connections keep no 16 KiB record buffers (issue 13 §4); writes may be partial and
        // their buffers move (our writes come from a queue, not a fixed pointer).
        _ = cssl_ctx_set_mode(context, cssl_default_mode())

        if let chain = configuration.certificateChain, let key = configuration.privateKey {
            try useCertificateChain(chain)
            try usePrivateKey(key)
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw .badConfiguration("the private key does not match the certificate: \(TLSContext.takeErrors())")
            }
        }
        try loadTrustRoots(configuration.trustRoots)
        try setCipherSuites(configuration.cipherSuites)
        if configuration.role == .client {
            // Sessions (TLS 1.3 tickets come after the handshake) are kept by us, per server.
            _ = cssl_ctx_set_session_cache_mode(context, cssl_client_session_cache_mode())
            SSL_CTX_sess_set_new_cb(context, tlsNewClientSession)
        }
        SSL_CTX_set_verify(context, verifyMode(), nil)
        if configuration.manuallyEvaluatesTrust {
            SSL_CTX_set_cert_verify_callback(context, tlsManualTrust, nil)
        }
        if !alpnWire.isEmpty {
            if configuration.role == .client {
                // 0 is success here (unlike the rest of OpenSSL).
                guard alpnWire.withUnsafeBufferPointer({ SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }) == 0 else {
                    throw .badConfiguration("ALPN protocols: \(TLSContext.takeErrors())")
                }
            } else {
                SSL_CTX_set_alpn_select_cb(context, tlsSelectApplicationProtocol, Unmanaged.passUnretained(self).toOpaque())
            }
        }
    }

    private func verifyMode() -> Int32 {
        switch (configuration.role, configuration.certificateVerification, configuration.clientCertificates) {
        case (.client, .unsafeNoVerification, _): return SSL_VERIFY_NONE
        case (.client, _, _): return SSL_VERIFY_PEER
        case (.server, _, .none): return SSL_VERIFY_NONE
        case (.server, _, .request): return SSL_VERIFY_PEER
        case (.server, _, .require): return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
        }
    }

    private func setCipherSuites(_ names: [String]) throws(TLSError) {
        let tls13 = names.filter { $0.hasPrefix("TLS_") }
        let tls12 = names.filter { !$0.hasPrefix("TLS_") }
        if !tls13.isEmpty, SSL_CTX_set_ciphersuites(context, tls13.joined(separator: ":")) != 1 {
            throw .badConfiguration("TLS 1.3 cipher suites \(tls13): \(TLSContext.takeErrors())")
        }
        // OpenSSL skips unknown names in a list; each is checked alone first, so a typo is an error.
        for name in tls12 where SSL_CTX_set_cipher_list(context, name) != 1 {
            throw .badConfiguration("cipher suite \(name): \(TLSContext.takeErrors())")
        }
        if !tls12.isEmpty, SSL_CTX_set_cipher_list(context, tls12.joined(separator: ":")) != 1 {
            throw .badConfiguration("cipher suites \(tls12): \(TLSContext.takeErrors())")
        }
    }

    private func useCertificateChain(_ source: TLSConfiguration.PEMSource) throws(TLSError) {
        switch source {
        case .file(let path):
            guard SSL_CTX_use_certificate_chain_file(context, path) == 1 else {
                throw .badConfiguration("certificate chain \(path): \(TLSContext.takeErrors())")
            }
        case .data(let pem):
            let certificates = try TLSContext.certificates(in: pem, what: "certificate chain")
            guard let leaf = certificates.first else { throw .badConfiguration("certificate chain: no certificate in the PEM data") }
            defer { X509_free(leaf) }
            guard SSL_CTX_use_certificate(context, leaf) == 1 else {
                for certificate in certificates.dropFirst() { X509_free(certificate) }
                throw .badConfiguration("certificate: \(TLSContext.takeErrors())")
            }
            // The context takes ownership of each extra certificate.
            for certificate in certificates.dropFirst() where cssl_ctx_add_extra_chain_cert(context, certificate) != 1 {
                X509_free(certificate)
                throw .badConfiguration("certificate chain: \(TLSContext.takeErrors())")
            }
        }
    }

    private func usePrivateKey(_ source: TLSConfiguration.PEMSource) throws(TLSError) {
        switch source {
        case .file(let path):
            guard SSL_CTX_use_PrivateKey_file(context, path, SSL_FILETYPE_PEM) == 1 else {
                throw .badConfiguration("private key \(path): \(TLSContext.takeErrors())")
            }
        case .data(let pem):
            let key: OpaquePointer? = TLSContext.withMemoryBIO(pem) { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
            guard let key else { throw .badConfiguration("private key: \(TLSContext.takeErrors())") }
            defer { EVP_PKEY_free(key) }
            guard SSL_CTX_use_PrivateKey(context, key) == 1 else {
                throw .badConfiguration("private key: \(TLSContext.takeErrors())")
            }
        }
    }

    private func loadTrustRoots(_ roots: TLSConfiguration.TrustRoots) throws(TLSError) {
        switch roots {
        case .system:
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw .badConfiguration("the system trust store: \(TLSContext.takeErrors())")
            }
        case .files(let paths):
            for path in paths where SSL_CTX_load_verify_locations(context, path, nil) != 1 {
                throw .badConfiguration("trust roots \(path): \(TLSContext.takeErrors())")
            }
        case .pem(let pem):
            let store = SSL_CTX_get_cert_store(context)
            let certificates = try TLSContext.certificates(in: pem, what: "trust roots")
            defer { certificates.forEach { X509_free($0) } }
            for certificate in certificates where X509_STORE_add_cert(store, certificate) != 1 {
                throw .badConfiguration("trust roots: \(TLSContext.takeErrors())")
            }
        }
    }

    // MARK: Helpers

    /// OpenSSL's number for `version` (`TLS1_2_VERSION`, `TLS1_3_VERSION`).
    static func wireVersion(_ version: TLSConfiguration.Version) -> Int32 {
        switch version {
        case .tls12: return TLS1_2_VERSION
        case .tls13: return TLS1_3_VERSION
        }
    }

    /// Every certificate in `pem` (the caller frees them).
    private static func certificates(in pem: Data, what: String) throws(TLSError) -> [OpaquePointer] {
        let certificates: [OpaquePointer] = withMemoryBIO(pem) { bio in
            var found: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) { found.append(certificate) }
            return found
        }
        clearErrors()  // the loop ends on a "no start line" error
        guard !certificates.isEmpty else { throw .badConfiguration("\(what): no certificate in the PEM data") }
        return certificates
    }

    private static func withMemoryBIO<R>(_ data: Data, _ body: (OpaquePointer) -> R) -> R {
        data.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))!
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    /// Empties this thread's OpenSSL error queue.
    static func clearErrors() { ERR_clear_error() }

    /// This thread's OpenSSL errors in words, oldest first (`error:0A000086:SSL routines::certificate
    /// verify failed` → "certificate verify failed"), and empties the queue.
    static func takeErrors() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            if let reason = ERR_reason_error_string(code) {
                reasons.append(String(cString: reason))
            } else {
                var text = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &text, text.count)
                reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return reasons.isEmpty ? "no reason given" : reasons.joined(separator: "; ")
    }
}

/// A server's ALPN choice (`SSL_CTX_set_alpn_select_cb`): the first of its own protocols that the
/// client offered; none in common: no ALPN (the handshake goes on, RFC 7301 §3.2 allows either).
private func tlsSelectApplicationProtocol(
    _ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ outLength: UnsafeMutablePointer<UInt8>?,
    _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let argument, let out, let outLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
    let context = Unmanaged<TLSContext>.fromOpaque(argument).takeUnretainedValue()
    let clients = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
    var index = 0
    var own = 0
    // Ours in order of preference; each checked against every name the client offered.
    while own < context.alpnWire.count {
        let length = Int(context.alpnWire[own])
        let name = context.alpnWire[(own + 1)..<min(own + 1 + length, context.alpnWire.count)]
        index = 0
        while index < clients.count {
            let offeredLength = Int(clients[index])
            let end = index + 1 + offeredLength
            guard end <= clients.count else { break }
            if offeredLength == length, clients[(index + 1)..<end].elementsEqual(name) {
                out.pointee = offered + index + 1
                outLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            index = end
        }
        own += 1 + length
    }
    return SSL_TLSEXT_ERR_NOACK
}

/// A client got a session to resume later (`SSL_CTX_sess_set_new_cb`): a copy is kept by its context
/// for the stage's ``TLSStage/sessionKey``. A copy, because OpenSSL marks the connection's own session
/// not resumable when that connection ends without close_notify (a server that just closes, as
/// Python's `ssl` does), which TLS 1.1 and later no longer require (RFC 5246 §7.2.1; TLS 1.3 tickets
/// stand alone, RFC 8446 §4.6.1). Returns 0: the connection keeps its own reference.
private func tlsNewClientSession(_ ssl: OpaquePointer?, _ session: OpaquePointer?) -> Int32 {
    guard let ssl, let session, let stage = TLSStage.stage(of: ssl), let key = stage.sessionKey,
        let copy = SSL_SESSION_dup(session)
    else { return 0 }
    stage.context.storeSession(copy, for: key)
    return 0
}

/// The verification of a client with ``TLSConfiguration/manuallyEvaluatesTrust``
/// (`SSL_CTX_set_cert_verify_callback`, in place of OpenSSL's `X509_verify_cert`). First call: runs
/// OpenSSL's check, keeps its finding for the app (``TLSStage/pendingTrust``) and pauses the handshake
/// (`SSL_set_retry_verify`: `SSL_do_handshake` returns `SSL_ERROR_WANT_RETRY_VERIFY`). Called again when
/// the handshake goes on after the app's answer: returns it (1 trusted, 0 not).
private func tlsManualTrust(_ store: OpaquePointer?, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let store, let raw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()) else { return 0 }
    let ssl = OpaquePointer(raw)
    guard let stage = TLSStage.stage(of: ssl) else { return 0 }
    switch stage.trustDecision {
    case .notAsked:
        let verified = X509_verify_cert(store) == 1
        let error = verified ? nil : stage.verificationError(Int32(X509_STORE_CTX_get_error(store)))
        TLSContext.clearErrors()
        stage.pendingTrust = TLSPeerTrust(
            certificateChain: TLSStage.derChain(store),
            peerName: stage.context.configuration.peerName,
            verificationError: error,
            publicKeySHA256: X509_STORE_CTX_get0_cert(store).map(TLSStage.publicKeySHA256) ?? Data())
        stage.trustDecision = .asked
        return cssl_set_retry_verify(ssl)
    case .asked:
        return cssl_set_retry_verify(ssl)
    case .trusted:
        X509_STORE_CTX_set_error(store, X509_V_OK)
        return 1
    case .rejected:
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION)
        return 0
    }
}
