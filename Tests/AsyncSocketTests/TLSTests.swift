import AsyncSocket
import Dispatch
import Foundation
import Testing
import TestSupport

/// TLS as a stage of the byte path (``TCPSocket/startTLS(_:)``): both ends ours, certificates made by
/// `openssl` at test time (``TestCertificates``).
@Suite struct TLSTests {
    static func serverSettings(_ files: TestCertificates, certificate: String? = nil, key: String? = nil) -> TLSConfiguration {
        .server(certificateChain: .file(certificate ?? files.serverCertificate), privateKey: .file(key ?? files.serverKey))
    }

    static func clientSettings(_ files: TestCertificates, peerName: String = "localhost") -> TLSConfiguration {
        var settings = TLSConfiguration.client(peerName: peerName)
        settings.trustRoots = .files([files.caCertificate])
        return settings
    }

    /// The next event of `delegate` that is not progress.
    private func next(_ delegate: RecordingDelegate) async throws -> SocketEvent {
        try await delegate.events.first { !$0.isProgress }
    }

    @Test func bothEndsSecureAndBytesGoThroughEitherWay() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        #expect(!pair.client.isSecure)
        accepted.startTLS(Self.serverSettings(files))
        pair.client.startTLS(Self.clientSettings(files))
        // Queued after startTLS: they wait for the handshake, then go through TLS.
        pair.client.write(Data("hello over TLS\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        accepted.readData(to: TCPSocket.lfData, withTimeout: TestTiming.hangTimeout(5), tag: 2)
        #expect(try await next(pair.clientDelegate) == .secured)
        #expect(try await next(pair.serverDelegate) == .secured)
        #expect(try await next(pair.clientDelegate) == .wrote(tag: 1))
        #expect(try await next(pair.serverDelegate) == .read(Data("hello over TLS\n".utf8), tag: 2))
        #expect(pair.client.isSecure && accepted.isSecure)
        #expect(pair.client.tlsProtocolVersion == "TLSv1.3")
        accepted.write(Data("and back\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 3)
        pair.client.readData(to: TCPSocket.lfData, withTimeout: TestTiming.hangTimeout(5), tag: 4)
        #expect(try await next(pair.serverDelegate) == .wrote(tag: 3))
        #expect(try await next(pair.clientDelegate) == .read(Data("and back\n".utf8), tag: 4))
    }

    /// GCDAsyncSocket's STARTTLS pattern: a plaintext line, then startTLS at once on both sides.
    @Test func writeStarttlsThenStartTLSAtOnce() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        pair.client.write(Data("STARTTLS\r\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        pair.client.startTLS(Self.clientSettings(files))
        pair.client.write(Data("secret\r\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 2)
        accepted.readData(to: TCPSocket.crlfData, withTimeout: TestTiming.hangTimeout(5), tag: 10)
        #expect(try await next(pair.serverDelegate) == .read(Data("STARTTLS\r\n".utf8), tag: 10))
        accepted.startTLS(Self.serverSettings(files))
        accepted.readData(to: TCPSocket.crlfData, withTimeout: TestTiming.hangTimeout(5), tag: 11)
        #expect(try await next(pair.serverDelegate) == .secured)
        #expect(try await next(pair.serverDelegate) == .read(Data("secret\r\n".utf8), tag: 11))
        let client = try await pair.clientDelegate.events.next(3).filter { !$0.isProgress }
        #expect(client == [.wrote(tag: 1), .secured, .wrote(tag: 2)])
    }

    @Test(.cpuBound) func tenMegabytesArriveWholeAndInOrder() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(Self.serverSettings(files))
        pair.client.startTLS(Self.clientSettings(files))
        let size = 10 << 20  // 10 MiB (issue 13 §3)
        let bytes = patternBytes(size, multiplier: 31, shift: 11)
        pair.client.write(bytes, withTimeout: TestTiming.hangTimeout(30), tag: 1)
        accepted.readData(toLength: UInt(size), withTimeout: TestTiming.hangTimeout(30), tag: 2)
        #expect(try await next(pair.serverDelegate) == .secured)
        let read = try await next(pair.serverDelegate)
        #expect(read.readData == bytes)
    }

    @Test func theCipherSuitesAreTheOnesAskedFor() async throws {
        let files = try await TestCertificates.shared()
        for suite in ["TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"] {
            let pair = try LoopbackPair()
            defer { pair.close() }
            let accepted = try await pair.connect()
            accepted.startTLS(Self.serverSettings(files))
            var client = Self.clientSettings(files)
            client.cipherSuites = [suite]
            pair.client.startTLS(client)
            #expect(try await next(pair.clientDelegate) == .secured)
            #expect(try await next(pair.serverDelegate) == .secured)
            #expect(pair.client.tlsCipherSuite == suite && accepted.tlsCipherSuite == suite)
        }
        var tls12 = Self.clientSettings(files)
        tls12.maximumVersion = .tls12
        tls12.cipherSuites = ["ECDHE-ECDSA-AES128-GCM-SHA256"]
        let (client, _) = try await handshake(files, server: Self.serverSettings(files), client: tls12)
        #expect(client == .secured)
        var typo = Self.clientSettings(files)
        typo.cipherSuites = ["ECDHE-ECDSA-AES128-GCM-SHA256", "NO-SUCH-CIPHER"]
        let error = try await handshakeError(files, server: Self.serverSettings(files), client: typo)
        #expect(error == .tls(.badConfiguration("cipher suite NO-SUCH-CIPHER: no cipher match")))
    }

    @Test func aClientRefusesAServerWhoseCertificateNamesAnotherHost() async throws {
        let files = try await TestCertificates.shared()
        let error = try await handshakeError(
            files, server: Self.serverSettings(files), client: Self.clientSettings(files, peerName: "example.com"))
        #expect(error == .tls(.hostnameMismatch(expected: "example.com")))
    }

    @Test func anIPAddressIsCheckedAgainstTheCertificatesAddresses() async throws {
        let files = try await TestCertificates.shared()
        let (client, _) = try await handshake(
            files, server: Self.serverSettings(files), client: Self.clientSettings(files, peerName: "127.0.0.1"))
        #expect(client == .secured)
        let error = try await handshakeError(
            files, server: Self.serverSettings(files), client: Self.clientSettings(files, peerName: "127.0.0.2"))
        #expect(error == .tls(.hostnameMismatch(expected: "127.0.0.2")))
    }

    @Test func aClientRefusesACertificateFromAnUntrustedCA() async throws {
        let files = try await TestCertificates.shared()
        var client = Self.clientSettings(files)
        client.trustRoots = .system
        let error = try await handshakeError(files, server: Self.serverSettings(files), client: client)
        #expect(error == .tls(.certificateUntrusted("unable to get local issuer certificate")))
    }

    @Test func aClientRefusesASelfSignedCertificate() async throws {
        let files = try await TestCertificates.shared()
        let server = Self.serverSettings(files, certificate: files.selfSignedCertificate, key: files.selfSignedKey)
        let error = try await handshakeError(files, server: server, client: Self.clientSettings(files))
        #expect(error == .tls(.certificateUntrusted("self-signed certificate")))
    }

    @Test func aClientRefusesAnExpiredCertificate() async throws {
        let files = try await TestCertificates.shared()
        let server = Self.serverSettings(files, certificate: files.expiredCertificate)
        let error = try await handshakeError(files, server: server, client: Self.clientSettings(files))
        #expect(error == .tls(.certificateExpired("certificate has expired")))
    }

    @Test func turningVerificationOffIsExplicitAndThenAnythingGoes() async throws {
        let files = try await TestCertificates.shared()
        var client = TLSConfiguration.client(peerName: nil)
        client.certificateVerification = .unsafeNoVerification
        let server = Self.serverSettings(files, certificate: files.selfSignedCertificate, key: files.selfSignedKey)
        let (secured, _) = try await handshake(files, server: server, client: client)
        #expect(secured == .secured)
        // Without a name and with verification on, the settings themselves are refused.
        let error = try await handshakeError(files, server: Self.serverSettings(files), client: .client(peerName: nil))
        #expect(error == .tls(.badConfiguration("a client that verifies the server needs its name (peerName)")))
    }

    @Test func aServerThatRequiresAClientCertificateRefusesAClientWithout() async throws {
        let files = try await TestCertificates.shared()
        var server = Self.serverSettings(files)
        server.clientCertificates = .require
        server.trustRoots = .files([files.caCertificate])
        let (_, serverError) = try await handshake(files, server: server, client: Self.clientSettings(files))
        #expect(serverError == .disconnected(.tls(.certificateRequired)))
        var client = Self.clientSettings(files)
        client.certificateChain = .file(files.clientCertificate)
        client.privateKey = .file(files.clientKey)
        let (secured, serverSecured) = try await handshake(files, server: server, client: client)
        #expect(secured == .secured && serverSecured == .secured)
    }

    @Test func theAgreedApplicationProtocolIsTheServersFirstChoiceTheClientOffers() async throws {
        let files = try await TestCertificates.shared()
        var server = Self.serverSettings(files)
        server.applicationProtocols = ["h2", "chat/2"]
        var client = Self.clientSettings(files)
        client.applicationProtocols = ["chat/2", "chat/1"]
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(server)
        pair.client.startTLS(client)
        #expect(try await next(pair.clientDelegate) == .secured)
        #expect(pair.client.negotiatedApplicationProtocol == "chat/2")
    }

    @Test func aPinnedPublicKeyIsAcceptedAndAnyOtherRefusedBeforeAnyData() async throws {
        let files = try await TestCertificates.shared()
        #expect(files.serverPublicKeyPin.count == 32)
        var client = Self.clientSettings(files)
        client.pinnedPublicKeys = [files.serverPublicKeyPin]
        let (secured, _) = try await handshake(files, server: Self.serverSettings(files), client: client)
        #expect(secured == .secured)
        client.pinnedPublicKeys = [Data(repeating: 7, count: 32)]
        let error = try await handshakeError(files, server: Self.serverSettings(files), client: client)
        #expect(error == .tls(.pinMismatch(actual: files.serverPublicKeyPin.base64EncodedString())))
    }

    /// A second connection to the same server with the same settings resumes the first one's session
    /// (TLS 1.3 ticket), and one with TLS 1.2 as well (session ticket).
    @Test(arguments: [TLSConfiguration.Version.tls13, .tls12])
    func aReconnectResumesTheSession(version: TLSConfiguration.Version) async throws {
        let files = try await TestCertificates.shared()
        let serverDelegate = RecordingDelegate()
        let listener = TCPSocket(delegate: serverDelegate, delegateQueue: DispatchQueue(label: "tls-resume"))
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer { listener.disconnect() }
        var server = Self.serverSettings(files)
        server.maximumVersion = version
        var reused: [Bool] = []
        for round in 1...2 {
            let clientDelegate = RecordingDelegate()
            let client = TCPSocket(delegate: clientDelegate, delegateQueue: DispatchQueue(label: "tls-resume-client"))
            defer { client.disconnect() }
            try client.connect(toHost: "127.0.0.1", onPort: listener.localPort, withTimeout: TestTiming.hangTimeout(5))
            // The last round's connection ends meanwhile: its events are skipped.
            guard
                case .accepted(let accepted) = try await serverDelegate.events.first(where: {
                    if case .accepted = $0 { return true } else { return false }
                })
            else { return }
            defer { accepted.disconnect() }
            accepted.startTLS(server)
            client.startTLS(Self.clientSettings(files))
            // A round trip: the client reads the server's ticket, sent after the handshake, with the reply.
            client.write(Data("ping \(round)\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
            accepted.readData(to: TCPSocket.lfData, withTimeout: TestTiming.hangTimeout(5), tag: 2)
            // The last round's connection may still report its end meanwhile: its events are skipped.
            let ping = SocketEvent.read(Data("ping \(round)\n".utf8), tag: 2)
            #expect(try await serverDelegate.events.first { $0 == .secured || $0 == ping } == .secured)
            #expect(try await serverDelegate.events.first { $0 == ping } == ping)
            accepted.write(Data("pong\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 3)
            client.readData(to: TCPSocket.lfData, withTimeout: TestTiming.hangTimeout(5), tag: 4)
            #expect(try await clientDelegate.events.first { $0.readData != nil } == .read(Data("pong\n".utf8), tag: 4))
            reused.append(client.isTLSSessionReused)
            #expect(client.tlsProtocolVersion == (version == .tls13 ? "TLSv1.3" : "TLSv1.2"))
        }
        #expect(reused == [false, true])
    }

    /// A peer that stalls in the handshake is dropped at the handshake timeout, in virtual time; the
    /// reads and writes waiting for the handshake do not time out meanwhile.
    @Test func aPeerThatSendsNothingIsClosedAtTheHandshakeTimeout() async throws {
        let files = try await TestCertificates.shared()
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "tls-timeout")
        defer { group.shutdown() }
        // The server's loop runs on the manual clock; the client's (connect timers and all) on real time.
        let pair = try LoopbackPair(group: group, clientGroup: .shared)
        defer { pair.close() }
        let accepted = try await pair.connect()
        var server = Self.serverSettings(files)
        server.handshakeTimeout = 10
        accepted.startTLS(server)
        accepted.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        // Queued after startTLS, these wait for the handshake: their timeouts have not started (they
        // once ran from the call, and a slow handshake failed them).
        accepted.readData(to: TCPSocket.lfData, withTimeout: 1, tag: 2)
        accepted.write(Data("after the handshake\n".utf8), withTimeout: 1, tag: 3)
        // Waits for the socket's loop, which has started the handshake (and its timer) by then.
        accepted.eventLoop.runAndWait {}
        await clock.advance(by: .milliseconds(9_999))
        #expect(accepted.isConnected)
        await clock.advance(by: .milliseconds(1))
        // (After socketWillDisconnect, which hands back the unsent write's tag.)
        #expect(try await pair.serverDelegate.events.first { $0.disconnectError != nil } == .disconnected(.tls(.handshakeTimeout)))
        #expect(pair.serverDelegate.events.all.contains(.willDisconnect(unread: Data(), unsentTags: [3])))
    }

    /// The first 5 bytes of a ClientHello, then FIN: the handshake fails at once (not at the timeout),
    /// also with half-close allowed, and the server's descriptor is closed.
    @Test func aTruncatedClientHelloEndsTheHandshake() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        pair.client.autoDisconnectOnClosedReadStream = false  // the client half-closes and waits
        accepted.autoDisconnectOnClosedReadStream = false  // half-close allowed on the server too
        accepted.startTLS(Self.serverSettings(files))
        pair.client.write(Data([0x16, 0x03, 0x01, 0x02, 0x00]), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        pair.client.closeWriteStreamAfterWriting()
        pair.client.readData(withTimeout: -1, tag: 2)
        #expect(try await next(pair.serverDelegate) == .disconnected(.tls(.unexpectedEOF)))
        // The server closed its descriptor (it does not sit half-open): the client reads the end.
        let clientEnd = try await pair.clientDelegate.events.first { $0.disconnectError != nil || $0 == .readStreamClosed }
        #expect(clientEnd == .readStreamClosed, "\(pair.clientDelegate.events.all)")  // then disconnected(nil): both sides closed
        #expect(!accepted.isConnected)
    }

    /// A peer that does not speak TLS gets a typed handshake failure, with OpenSSL's reason.
    @Test func plaintextWhereAClientHelloShouldBeIsAHandshakeFailure() async throws {
        let files = try await TestCertificates.shared()
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(Self.serverSettings(files))
        pair.client.write(Data("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        #expect(try await next(pair.serverDelegate) == .disconnected(.tls(.handshakeFailed("http request"))))
    }

    // MARK: Helpers

    /// Runs a handshake between `server` and `client` settings; returns each side's first event
    /// (`.secured`, or the disconnect with its error).
    private func handshake(
        _ files: TestCertificates, server: TLSConfiguration, client: TLSConfiguration
    ) async throws -> (SocketEvent, SocketEvent) {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        accepted.startTLS(server)
        pair.client.startTLS(client)
        // A read on each side, so that an end is reported even before anything else happens.
        accepted.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        pair.client.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        let clientEvent = try await next(pair.clientDelegate)
        let serverEvent = try await next(pair.serverDelegate)
        return (clientEvent, serverEvent)
    }

    /// The client's error from a handshake that must fail.
    private func handshakeError(_ files: TestCertificates, server: TLSConfiguration, client: TLSConfiguration) async throws -> SocketError?
    {
        let (event, _) = try await handshake(files, server: server, client: client)
        guard case .disconnected(let error) = event else {
            Issue.record("the handshake did not fail: \(event)")
            return nil
        }
        return error
    }
}
