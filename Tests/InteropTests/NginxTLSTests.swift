#if os(Linux)
    import AsyncSocket
    import Foundation
    import Testing
    import TestSupport

    /// TCPSocket with TLS as an HTTPS client of Debian's nginx (`listen … ssl`): keep-alive and pipelined
    /// GETs of files past the read buffer (many records), both versions, ALPN, and session resumption.
    @Suite(TestTiming.timeLimit(minutes: 1)) struct NginxTLSTests {
        private func nginx(_ files: TestCertificates) async throws -> ServerProcess {
            try await Servers.nginx(files: NginxTests.files, tls: (files.serverCertificate, files.serverKey))
        }

        private func settings(_ files: TestCertificates, version: TLSConfiguration.Version? = nil) -> TLSConfiguration {
            var settings = TLSConfiguration.client(peerName: "localhost")
            settings.trustRoots = .files([files.caCertificate])
            settings.maximumVersion = version
            settings.applicationProtocols = ["http/1.1"]
            return settings
        }

        @Test(arguments: [(TLSConfiguration.Version.tls13, "TLSv1.3"), (.tls12, "TLSv1.2")])
        func keepAliveAndPipelinedGetsOverTLS(version: TLSConfiguration.Version, name: String) async throws {
            let files = try await TestCertificates.shared()
            let nginx = try await nginx(files)
            defer { nginx.stop() }
            let client = try await InteropClient.connect(to: nginx.port, tls: settings(files, version: version))
            defer { client.close() }
            #expect(client.socket.tlsProtocolVersion == name)
            #expect(client.socket.negotiatedApplicationProtocol == "http/1.1")
            for (index, path) in ["/hello.txt", "/missing.txt", "/large.bin"].enumerated() {
                client.get(path, tag: index)
                NginxTests.check(try await client.readResponse(tag: 100 * index), for: path)
            }
            let paths = ["/bytes.bin", "/huge.bin", "/empty.txt", "/hello.txt"]
            client.socket.write(Data(paths.map { HTTPResponse.request($0) }.joined()), withTimeout: TestTiming.hangTimeout(10), tag: 10)
            for (index, path) in paths.enumerated() {
                NginxTests.check(try await client.readResponse(tag: 1000 + 100 * index), for: path)
            }
            #expect(client.socket.isConnected && client.socket.isSecure)
        }

        /// A second connection with the same settings resumes the first one's session (a TLS 1.3 ticket,
        /// or a TLS 1.2 session ticket), which nginx accepts.
        @Test(arguments: [TLSConfiguration.Version.tls13, .tls12])
        func aSecondConnectionResumesTheSession(version: TLSConfiguration.Version) async throws {
            let files = try await TestCertificates.shared()
            let nginx = try await nginx(files)
            defer { nginx.stop() }
            var settings = settings(files, version: version)
            settings.handshakeTimeout = 9  // settings of their own: a session store no other test shares
            var reused: [Bool] = []
            for round in 0..<2 {
                let client = try await InteropClient.connect(to: nginx.port, tls: settings)
                // A response: by then the server's TLS 1.3 ticket (sent after the handshake) has arrived.
                client.get("/hello.txt", close: true, tag: round)
                NginxTests.check(try await client.readResponse(tag: 10), for: "/hello.txt", connection: "close")
                #expect(try await client.disconnection() == .closedByPeer)
                // Read after nginx closed: what the handshake agreed on stays readable.
                reused.append(client.socket.isTLSSessionReused)
                #expect(client.socket.tlsProtocolVersion == (version == .tls13 ? "TLSv1.3" : "TLSv1.2"))
                client.close()
            }
            #expect(reused == [false, true])
        }
    }
#endif
