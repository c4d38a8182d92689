import AsyncSocket
import Foundation
import Testing
import TestSupport

/// TLS through the async API: `connect(…, tls:)`, ``TCPConnection/startTLS(_:evaluatingTrust:)`` and a
/// listener with ``TCPListener/Options/tls``.
@Suite struct TLSAsyncTests {
    private func listener(
        _ files: TestCertificates, alpn: [String] = [], certificate: String? = nil, key: String? = nil
    ) async throws -> TCPListener {
        var options = TCPListener.Options()
        var settings = TLSTests.serverSettings(files, certificate: certificate, key: key)
        settings.applicationProtocols = alpn
        options.tls = settings
        return try await TCPListener.bind(host: "127.0.0.1", port: 0, options: options)
    }

    /// The first connection the listener hands out.
    private func accept(_ listener: TCPListener) async throws -> TCPConnection {
        var iterator = listener.makeAsyncIterator()
        guard let connection = try await iterator.next() else { throw SocketError.connectionClosed }
        return connection
    }

    @Test func aTLSListenerAndConnectWithTLSTalkBothWays() async throws {
        let files = try await TestCertificates.shared()
        let listener = try await listener(files, alpn: ["chat/2", "chat/1"])
        defer { Task { await listener.close() } }
        var settings = TLSConfiguration.client(peerName: nil)  // becomes "localhost"
        settings.trustRoots = .files([files.caCertificate])
        settings.applicationProtocols = ["chat/1", "chat/2"]
        async let accepted = accept(listener)
        let client = try await TCPConnection.connect(
            toHost: "localhost", port: listener.port, timeout: .seconds(5), tls: settings,
            options: .init(isIPv6Enabled: false))
        let server = try await accepted
        #expect(client.isSecure)
        #expect(client.tlsProtocolVersion == "TLSv1.3")
        try await server.waitUntilSecure()
        #expect(server.negotiatedApplicationProtocol == "chat/2")
        #expect(client.negotiatedApplicationProtocol == "chat/2")
        try await client.write(Data("ping\n".utf8))
        #expect(try await server.read(upTo: TCPSocket.lfData, timeout: .seconds(5)) == Data("ping\n".utf8))
        try await server.write(Data("pong\n".utf8))
        #expect(try await client.read(upTo: TCPSocket.lfData, timeout: .seconds(5)) == Data("pong\n".utf8))
        await client.close()
        await server.close()
    }

    /// STARTTLS: a plaintext line each way, then TLS on both ends.
    @Test func startTLSAfterAPlaintextExchange() async throws {
        let files = try await TestCertificates.shared()
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        defer { Task { await listener.close() } }
        async let accepted = accept(listener)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = try await accepted
        try await client.write(Data("STARTTLS\r\n".utf8))
        #expect(try await server.read(upTo: TCPSocket.crlfData, timeout: .seconds(5)) == Data("STARTTLS\r\n".utf8))
        try await server.write(Data("220 go ahead\r\n".utf8))
        #expect(try await client.read(upTo: TCPSocket.crlfData, timeout: .seconds(5)) == Data("220 go ahead\r\n".utf8))
        async let serverSecured: Void = server.startTLS(TLSTests.serverSettings(files))
        try await client.startTLS(TLSTests.clientSettings(files, peerName: "127.0.0.1"))
        try await serverSecured
        #expect(client.isSecure && server.isSecure)
        try await client.write(Data("secret\r\n".utf8))
        #expect(try await server.read(upTo: TCPSocket.crlfData, timeout: .seconds(5)) == Data("secret\r\n".utf8))
        await client.close()
        await server.close()
    }

    /// The evaluator's "no", after it has been suspended a while: startTLS throws, and the listener's
    /// connection learns why through waitUntilSecure and its read.
    @Test func theEvaluatorsNoFailsConnectAndTheServerSeesTheAlert() async throws {
        let files = try await TestCertificates.shared()
        let listener = try await listener(files)
        defer { Task { await listener.close() } }
        async let accepted = accept(listener)
        let asked = LockedValue<[TLSPeerTrust]>([])
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        await #expect(throws: SocketError.tls(.certificateUntrusted("the app did not trust it"))) {
            try await client.startTLS(TLSTests.clientSettings(files)) { trust in
                asked.withLock { $0.append(trust) }
                try? await Task.sleep(for: .milliseconds(200))  // the app deciding
                return false
            }
        }
        #expect(!client.isSecure)
        #expect(asked.withLock { $0.map(\.verificationError) } == [nil])
        let server = try await accepted
        let expected = SocketError.tls(.handshakeFailed("sslv3 alert handshake failure"))
        await #expect(throws: expected) { try await server.waitUntilSecure() }
        await #expect(throws: expected) { _ = try await server.read(maxLength: 10) }
    }

    /// The evaluator trusts a self-signed server that OpenSSL's check refuses.
    @Test func theEvaluatorsYesTrustsASelfSignedServer() async throws {
        let files = try await TestCertificates.shared()
        let listener = try await listener(files, certificate: files.selfSignedCertificate, key: files.selfSignedKey)
        defer { Task { await listener.close() } }
        async let accepted = accept(listener)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        try await client.startTLS(TLSTests.clientSettings(files)) { trust in
            trust.verificationError == .certificateUntrusted("self-signed certificate") && trust.certificateChain.count == 1
        }
        let server = try await accepted
        try await server.write(Data("welcome\n".utf8))
        #expect(try await client.read(upTo: TCPSocket.lfData, timeout: .seconds(5)) == Data("welcome\n".utf8))
        await client.close()
        await server.close()
    }

    @Test func aListenerWithSettingsThatDoNotLoadFailsToBind() async throws {
        var options = TCPListener.Options()
        options.tls = .server(certificateChain: .file("/nonexistent/cert.pem"), privateKey: .file("/nonexistent/key.pem"))
        do {
            _ = try await TCPListener.bind(host: "127.0.0.1", port: 0, options: options)
            Issue.record("bound")
        } catch SocketError.tls(.badConfiguration(let reason)) {
            #expect(reason.hasPrefix("certificate chain /nonexistent/cert.pem: "))
        }
    }

    @Test func aFailedHandshakeClosesAndThrowsFromConnect() async throws {
        let files = try await TestCertificates.shared()
        let listener = try await listener(files)
        defer { Task { await listener.close() } }
        async let accepted = accept(listener)
        await #expect(throws: SocketError.tls(.hostnameMismatch(expected: "example.com"))) {
            _ = try await TCPConnection.connect(
                toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5),
                tls: TLSTests.clientSettings(files, peerName: "example.com"))
        }
        let server = try await accepted
        await #expect(throws: SocketError.self) { try await server.waitUntilSecure() }
    }
}
