import Foundation

/// A connection's TLS: the settings asked for, the barrier, then the session (``TLSStage``). Loop
/// thread only (hence unchecked `Sendable`). Kept apart by reference, so a plaintext connection pays
/// one pointer for it.
final class TLSState: @unchecked Sendable {
    let context: TLSContext
    /// The last request (read or write) queued before ``TCPSocket/startTLS(_:)``: the handshake waits
    /// for every request up to it; nil once it has started.
    var barrier: UInt64?
    /// The session, from the start of the handshake.
    var stage: TLSStage?
    var handshakeTimer: Scheduled?

    init(context: TLSContext, barrier: UInt64) {
        self.context = context
        self.barrier = barrier
    }

    /// The handshake has started and not finished: no plaintext goes either way.
    var isHandshaking: Bool { stage.map { !$0.isHandshakeDone } ?? false }
    /// Plaintext flows through the session.
    var isSecured: Bool { stage?.isHandshakeDone ?? false }
}

/// The most plaintext one TLS record carries: 16 KiB (RFC 8446 §5.1, RFC 5246 §6.2.1).
private let maxRecordPlaintext = 16 << 10

/// What a finished handshake agreed on, for the properties read from any thread. A class: every
/// connection's ``TCPSocket/Shared`` holds one reference for it (8 bytes) rather than the 57 bytes of
/// the value, which a plaintext connection never fills (docs/BENCHMARKS.md, "WebSocket idle memory").
final class TLSSummary: Sendable {
    let protocolVersion: String
    let cipherSuite: String
    let applicationProtocol: String?
    let isSessionReused: Bool

    init(protocolVersion: String, cipherSuite: String, applicationProtocol: String?, isSessionReused: Bool) {
        self.protocolVersion = protocolVersion
        self.cipherSuite = cipherSuite
        self.applicationProtocol = applicationProtocol
        self.isSessionReused = isSessionReused
    }
}

/// The most ciphertext waiting for the kernel before the socket stops encrypting more plaintext:
/// 256 KiB (a kernel send buffer's worth), so a slow peer holds back the write queue, not memory.
private let maxPendingCiphertext = 256 << 10

/// The most ciphertext kept while the app decides on a server's certificate
/// (``TLSConfiguration/manuallyEvaluatesTrust``): 1 MiB, room for a TLS 1.3 server's tickets and early
/// application data; a peer that sends more is cut off.
private let maxCiphertextWhileAwaitingTrust = 1 << 20

extension TCPSocket {
    /// Secures the connection with TLS, as GCDAsyncSocket's `startTLS:` does: a barrier in both queues.
    /// The handshake starts once every read and write queued before this call has completed (so
    /// "write STARTTLS, then startTLS at once" works); reads and writes queued after it wait for the
    /// handshake and then go through TLS. Bytes already received that no read took when the handshake
    /// starts are taken as the peer's first TLS bytes (GCDAsyncSocket hands its read buffer to
    /// SecureTransport the same way).
    ///
    /// When the handshake is done (and the peer verified, see ``TLSConfiguration``) the delegate gets
    /// ``TCPSocketDelegate/socketDidSecure(_:)`` and ``isSecure`` is true. A failure disconnects with
    /// ``SocketError/tls(_:)`` (the reason typed), as does a handshake longer than
    /// ``TLSConfiguration/handshakeTimeout``. Calling it on a connection that is not connected (or
    /// connecting), or twice, disconnects with ``SocketError/badConfig(_:)``.
    public func startTLS(_ settings: TLSConfiguration) {
        onLoop { [self] in
            guard let connection = lifecycle.connection else { return }
            guard connection.tls == nil else {
                close(error: .badConfig("startTLS was called twice on one connection"))
                return
            }
            let context: TLSContext
            do throws(TLSError) {
                context = try TLSContext.shared(for: settings)
            } catch {
                close(error: .tls(error))
                return
            }
            connection.tls = TLSState(context: context, barrier: nextRequestID)
            shared.withLock { $0.tlsSummary = nil }
            if isCurrent(connection) { startTLSIfBarrierPassed(connection) }
        }
    }

    /// True once the TLS handshake is done (``TCPSocketDelegate/socketDidSecure(_:)`` has been or is
    /// being delivered) until the connection ends. Any thread.
    public var isSecure: Bool { shared.withLock { $0.isSecure } }

    /// The ALPN protocol the TLS handshake agreed on (``TLSConfiguration/applicationProtocols``), if
    /// any. Set when the handshake is done and kept after the connection ends. Any thread.
    public var negotiatedApplicationProtocol: String? { shared.withLock { $0.tlsSummary?.applicationProtocol } }

    /// True when the TLS handshake resumed the session of an earlier connection (a client reconnecting
    /// to the same server with the same settings offers its last session). Set when the handshake is
    /// done and kept after the connection ends. Any thread.
    public var isTLSSessionReused: Bool { shared.withLock { $0.tlsSummary?.isSessionReused ?? false } }

    /// The TLS version in use ("TLSv1.3", "TLSv1.2"), or nil before a handshake is done. Kept after the
    /// connection ends. Any thread.
    public var tlsProtocolVersion: String? { shared.withLock { $0.tlsSummary?.protocolVersion } }

    /// The cipher suite in use, by OpenSSL's name ("TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256";
    /// ``TLSConfiguration/cipherSuites``), or nil before a handshake is done. Kept after the connection
    /// ends. Any thread.
    public var tlsCipherSuite: String? { shared.withLock { $0.tlsSummary?.cipherSuite } }

    // MARK: Loop side

    /// Whether `id`, a request's, was queued after a ``startTLS(_:)`` whose handshake has not finished:
    /// such a request waits.
    func waitsForTLS(_ connection: ConnectionState, id: UInt64) -> Bool {
        guard let tls = connection.tls, !tls.isSecured else { return false }
        guard let barrier = tls.barrier else { return true }  // handshaking
        return id > barrier
    }

    /// Starts the handshake once no read or write from before the barrier is left.
    func startTLSIfBarrierPassed(_ connection: ConnectionState) {
        guard let tls = connection.tls, let barrier = tls.barrier else { return }
        let readsBefore = connection.readQueue.withFirst { $0.id <= barrier } ?? false
        let writesBefore = connection.writeQueue.withFirst { $0.id <= barrier } ?? false
        guard !readsBefore, !writesBefore else { return }
        let stage: TLSStage
        do {
            let server = shared.withLock { $0.remoteAddress }
            stage = try TLSStage(context: tls.context, sessionKey: server.map { "\($0)" })
        } catch {
            close(error: .tls(error))
            return
        }
        tls.barrier = nil
        tls.stage = stage
        // What arrived and no read took is the peer's first TLS bytes.
        connection.buffer.withUnsafeReadableBytes { stage.feed($0) }
        connection.buffer.reset(keepingCapacity: false)
        scheduleHandshakeTimeout(connection, tls)
        continueHandshake(connection)
    }

    /// Closes the connection with ``TLSError/handshakeTimeout`` unless its handshake is done within the
    /// settings' time (none for 0).
    private func scheduleHandshakeTimeout(_ connection: ConnectionState, _ tls: TLSState) {
        let timeout = tls.context.configuration.handshakeTimeout
        guard timeout > 0 else { return }
        tls.handshakeTimer = eventLoop.scheduleTask(in: .nanoseconds(Int64(min(timeout, 1e9) * 1e9))) { [weak self] in
            guard let self, self.isCurrent(connection), tls.isHandshaking else { return }
            self.close(error: .tls(.handshakeTimeout))
        }
    }

    /// Moves the handshake on; when it is done, tells the delegate and lets the waiting reads and
    /// writes go.
    private func continueHandshake(_ connection: ConnectionState) {
        guard let tls = connection.tls, let stage = tls.stage else { return }
        let progress: TLSStage.HandshakeProgress
        do {
            progress = try stage.handshake()
        } catch {
            flushCiphertext(connection)  // the alert, if the kernel takes it now
            close(error: .tls(error))
            return
        }
        flushCiphertext(connection)
        guard isCurrent(connection) else { return }
        switch progress {
        case .needMore:
            updateInterest(connection)
            return
        case .awaitingTrust(let trust):
            askForTrust(connection, tls, trust)
            return
        case .done:
            break
        }
        tls.handshakeTimer?.cancel()
        tls.handshakeTimer = nil
        if let mismatch = stage.pinningError() {
            // Before anything is read or written through the session.
            close(error: .tls(mismatch))
            return
        }
        let summary = TLSSummary(
            protocolVersion: stage.protocolVersion, cipherSuite: stage.cipherSuite,
            applicationProtocol: stage.negotiatedApplicationProtocol, isSessionReused: stage.isSessionReused)
        shared.withLock {
            $0.isSecure = true
            $0.tlsSummary = summary
        }
        emit(.secured)
        // Application data may have come with the handshake's last flight.
        readPlaintext(connection)
        guard isCurrent(connection) else { return }
        processReads(connection)
        flushWrites(connection)
    }

    /// Hands `trust` to the delegate and pauses the handshake (and its timer) until the answer, which
    /// counts once and only for this connection.
    private func askForTrust(_ connection: ConnectionState, _ tls: TLSState, _ trust: TLSPeerTrust) {
        tls.handshakeTimer?.cancel()
        tls.handshakeTimer = nil
        updateInterest(connection)
        emit(
            .receivedTrust(
                trust,
                { [weak self] trusted in
                    self?.onLoop { [weak self] in
                        guard let self, self.isCurrent(connection), let stage = tls.stage, stage.decideTrust(trusted) else { return }
                        self.scheduleHandshakeTimeout(connection, tls)
                        self.continueHandshake(connection)
                    }
                }))
    }

    /// Ciphertext just read from the kernel into the stage's ``TLSStage/incomingCiphertext``, or the
    /// kernel's end of file.
    func receivedCiphertext(_ connection: ConnectionState, endOfStream: Bool) {
        guard let tls = connection.tls, let stage = tls.stage else { return }
        if endOfStream {
            // The kernel's end of file: clean only after the peer's close_notify (read as the end of
            // plaintext already).
            if connection.readEOF { return }
            close(error: .tls(.unexpectedEOF))
            return
        }
        if stage.isAwaitingTrust, stage.unprocessedCiphertext > maxCiphertextWhileAwaitingTrust {
            close(
                error: .tls(
                    .handshakeFailed(
                        "the peer sent more than \(maxCiphertextWhileAwaitingTrust) bytes while the app evaluated its certificate")))
            return
        }
        if tls.isHandshaking {
            continueHandshake(connection)
        } else {
            readPlaintext(connection)
        }
    }

    /// Takes every byte of plaintext the session holds into the read requests and the buffer (all of
    /// it: what stays inside OpenSSL would wake no read), then the end of the stream at close_notify.
    private func readPlaintext(_ connection: ConnectionState) {
        guard let stage = connection.tls?.stage else { return }
        let scratch = eventLoop.scratch
        while isCurrent(connection) {
            // Part of a read is buffered already: the record's plaintext goes in after it (as the
            // plaintext path reads the kernel in place), saving a copy through the scratch buffer.
            let inPlace = !connection.buffer.isEmpty && !connection.isProcessingReads
            let outcome: TLSStage.ReadOutcome
            do {
                outcome = try stage.read(into: inPlace ? connection.buffer.room(upTo: maxRecordPlaintext) : scratch)
            } catch {
                flushCiphertext(connection)
                close(error: .tls(error))
                return
            }
            switch outcome {
            case .bytes(let count):
                if inPlace {
                    connection.buffer.didAppend(count)
                    processReads(connection)
                } else {
                    processReads(connection, incoming: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                }
                continue
            case .closed:
                connection.readEOF = true
                processReads(connection)
            case .needMore:
                break
            }
            break
        }
        if isCurrent(connection), stage.pendingCiphertext.count > 0 { flushCiphertext(connection) }
    }

    /// Writes pending ciphertext to the kernel; true when none is left. Leaves the rest for the next
    /// writability (``ConnectionState/writeBlocked``). A failure closes the connection.
    @discardableResult
    func flushCiphertext(_ connection: ConnectionState) -> Bool {
        do {
            return try writePendingCiphertext(connection)
        } catch {
            close(error: error)
            return false
        }
    }

    /// ``flushCiphertext(_:)`` that throws instead of closing (for the middle of ``flushWrites(_:)``).
    private func writePendingCiphertext(_ connection: ConnectionState) throws(SocketError) -> Bool {
        guard let stage = connection.tls?.stage, connection.fd >= 0 else { return true }
        while stage.pendingCiphertext.count > 0 {
            let outcome = stage.pendingCiphertext.withUnsafeReadableBytes { raw -> Result<Posix.IOResult, SocketError> in
                var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
                return withUnsafeMutablePointer(to: &vector) { pointer in
                    Result { () throws(SocketError) in
                        try eventLoop.io.writev(connection.fd, UnsafeMutableBufferPointer(start: pointer, count: 1))
                    }
                }
            }
            let result = try outcome.get()
            guard case .processed(let written) = result, written > 0 else {
                connection.writeBlocked = true
                updateInterest(connection)
                return false
            }
            stage.pendingCiphertext.consume(written)
        }
        stage.pendingCiphertext.reset(keepingCapacity: false)
        return true
    }

    /// The TLS stage's part of ``flushWrites(_:)``: encrypts the gathered plaintext `iovecs` and writes
    /// the ciphertext; the count returned is of plaintext bytes taken (encrypted, maybe not all sent
    /// yet: what the kernel did not take waits in the stage, and nothing more is encrypted until it has
    /// gone).
    func writeThroughTLS(
        _ connection: ConnectionState, _ stage: TLSStage, _ iovecs: UnsafeMutableBufferPointer<iovec>
    ) throws(SocketError) -> Posix.IOResult {
        guard try writePendingCiphertext(connection) else { return .wouldBlock }
        var taken = 0
        for vector in iovecs {
            // Ciphertext is the plaintext plus 22 bytes a record: room for this much plaintext keeps the
            // held ciphertext near the bound, however large one write is.
            let room = maxPendingCiphertext - stage.pendingCiphertext.count
            guard room > 0 else { break }
            let bytes = UnsafeRawBufferPointer(start: vector.iov_base, count: min(vector.iov_len, room))
            let count: Int
            do {
                count = try stage.write(bytes)
            } catch {
                throw .tls(error)
            }
            taken += count
            if count < vector.iov_len { break }
        }
        _ = try writePendingCiphertext(connection)
        return taken == 0 ? .wouldBlock : .processed(taken)
    }

    /// Sends this side's close_notify, if the session is up, with one try at the kernel (the
    /// connection is closing: nothing waits for writability any more).
    func sendCloseNotify(_ connection: ConnectionState) {
        guard let tls = connection.tls, let stage = tls.stage, stage.isHandshakeDone, connection.fd >= 0 else { return }
        stage.close()
        flushCiphertext(connection)
    }

    /// Stops the handshake timer of a connection that ends.
    func endTLS(_ connection: ConnectionState) {
        connection.tls?.handshakeTimer?.cancel()
        connection.tls?.handshakeTimer = nil
    }
}
