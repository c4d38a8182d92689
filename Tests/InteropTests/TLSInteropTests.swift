#if os(Linux)
    import AsyncSocket
    import Foundation
    import Testing
    import TestSupport

    /// TLS against peers we did not write: `openssl s_server` and `s_client` (OpenSSL's own tools), and
    /// Python's `ssl` module; certificates made by `openssl` at test time (``TestCertificates``).
    @Suite struct TLSInteropTests {
        /// `openssl s_server -www` answers `GET /` with a status page; our client reads its first line
        /// through TLS, with the version the server allows.
        @Test(arguments: [("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")])
        func ourClientReadsAPageFromOpensslSServer(flag: String, version: String) async throws {
            let files = try await TestCertificates.shared()
            let directory = try ServerProcess.makeDirectory(for: "s_server")
            let server = try await ServerProcess.start("openssl", in: directory) { port in
                ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", files.serverCertificate, "-key", files.serverKey, "-www", flag]
            }
            defer { server.stop() }
            let delegate = RecordingDelegate()
            let client = TCPSocket(delegate: delegate, delegateQueue: DispatchQueue(label: "s_server-client"))
            defer { client.disconnect() }
            try client.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: TestTiming.hangTimeout(5))
            var settings = TLSConfiguration.client(peerName: "localhost")
            settings.trustRoots = .files([files.caCertificate])
            client.startTLS(settings)
            client.write(Data("GET / HTTP/1.0\r\n\r\n".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 1)
            client.readData(to: TCPSocket.crlfData, withTimeout: TestTiming.hangTimeout(5), tag: 2)
            let events = try await delegate.events.next(4).filter { !$0.isProgress }
            #expect(events.contains(.secured))
            #expect(events.contains(.read(Data("HTTP/1.0 200 ok\r\n".utf8), tag: 2)), "\(events)")
            #expect(client.tlsProtocolVersion == version)
        }

        /// `openssl s_client` verifies our server against the test CA and the name `localhost`, sends a
        /// line and gets our answer back.
        @Test func opensslSClientTalksToOurServer() async throws {
            let files = try await TestCertificates.shared()
            let server = try EchoOverTLS(files)
            defer { server.stop() }
            let client = try ChildProcess(
                "openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(server.port)", "-CAfile", files.caCertificate, "-verify_return_error",
                    "-servername", "localhost", "-verify_hostname", "localhost", "-quiet"
                ])
            defer { client.stop() }
            client.type("hello from s_client")
            #expect(try await client.lines.first { $0.hasPrefix("echo:") } == "echo: hello from s_client")
            #expect(try await server.secured.next() == "TLSv1.3")
        }

        /// A peer that offers only TLS 1.0 or 1.1 is refused with the typed reason (the default minimum is 1.2).
        @Test(arguments: ["-tls1", "-tls1_1"])
        func aClientOfferingOnlyAnOldVersionIsRefused(flag: String) async throws {
            let files = try await TestCertificates.shared()
            let server = try EchoOverTLS(files)
            defer { server.stop() }
            let client = try ChildProcess(
                "openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(server.port)", flag, "-cipher", "DEFAULT@SECLEVEL=0", "-quiet"
                ])
            defer { client.stop() }
            guard case .disconnected(.tls(.unsupportedVersion)) = try await server.ended.next() else {
                Issue.record("the server did not refuse \(flag) as unsupportedVersion")
                return
            }
        }

        /// Python's `ssl` module as the client, with its default (secure) context and the test CA.
        @Test func aPythonSSLClientTalksToOurServer() async throws {
            let files = try await TestCertificates.shared()
            let server = try EchoOverTLS(files)
            defer { server.stop() }
            let script = """
                import socket, ssl, sys
                context = ssl.create_default_context(cafile=sys.argv[1])
                with socket.create_connection(("127.0.0.1", int(sys.argv[2]))) as raw:
                    with context.wrap_socket(raw, server_hostname="localhost") as tls:
                        tls.sendall(b"hello from python\\n")
                        print(tls.recv(100).decode().strip(), tls.version())
                """
            let python = try ChildProcess("python3", ["-c", script, files.caCertificate, "\(server.port)"])
            defer { python.stop() }
            #expect(try await python.lines.next() == "echo: hello from python TLSv1.3")
            #expect(try await python.exitStatus() == 0)
        }
    }

    extension TLSInteropTests {
        /// Python's `ssl` module as the server (TLS 1.3, ALPN), our async client: the protocol agreed, a
        /// line each way, and a second connection that resumes the session from the ticket Python sent.
        @Test func ourClientTalksToAPythonSSLServer() async throws {
            let files = try await TestCertificates.shared()
            let script = """
                import socket, ssl, sys
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[1], sys.argv[2])
                context.set_alpn_protocols(["chat/2", "chat/1"])
                with socket.create_server(("127.0.0.1", 0)) as listener:
                    print(listener.getsockname()[1], flush=True)
                    for _ in range(2):
                        raw, _ = listener.accept()
                        with context.wrap_socket(raw, server_side=True) as tls:
                            line = tls.recv(100).decode().strip()
                            tls.sendall(f"python got {line} over {tls.selected_alpn_protocol()}\\n".encode())
                """
            let python = try ChildProcess("python3", ["-c", script, files.serverCertificate, files.serverKey])
            defer { python.stop() }
            guard let port = UInt16(try await python.lines.next()) else {
                Issue.record("no port from the Python server")
                return
            }
            var settings = TLSConfiguration.client(peerName: "localhost")
            settings.trustRoots = .files([files.caCertificate])
            settings.applicationProtocols = ["chat/1", "chat/2"]
            settings.handshakeTimeout = 9.5  // settings of this test's own: a session store no other test shares
            var reused: [Bool] = []
            for round in 1...2 {
                let connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5), tls: settings)
                #expect(connection.negotiatedApplicationProtocol == "chat/2")
                try await connection.write(Data("hello \(round)\n".utf8))
                let answer = try await connection.read(upTo: TCPSocket.lfData, timeout: .seconds(5))
                #expect(String(decoding: answer, as: UTF8.self) == "python got hello \(round) over chat/2\n")
                reused.append(connection.isTLSSessionReused)
                await connection.close()
            }
            #expect(reused == [false, true])
            #expect(try await python.exitStatus() == 0)
        }
    }

    /// A TLS server of ours on a free loopback port: each connection is secured with the test
    /// certificate, and each line read is answered `echo: LINE`, then the connection is closed.
    private final class EchoOverTLS: TCPSocketDelegate, Sendable {
        let listener: TCPSocket
        /// The TLS version of each connection secured.
        let secured = EventRecorder<String>()
        /// How each connection ended.
        let ended = EventRecorder<SocketEvent>()
        private let settings: TLSConfiguration
        private let accepted = LockedValue<[TCPSocket]>([])

        init(_ files: TestCertificates) throws {
            settings = .server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
            listener = TCPSocket(delegate: nil, delegateQueue: nil)
            listener.setDelegate(self, delegateQueue: DispatchQueue(label: "echo-over-tls"))
            try listener.accept(onInterface: "127.0.0.1", port: 0)
        }

        var port: UInt16 { listener.localPort }

        func stop() {
            listener.disconnect()
            accepted.withLock { $0.forEach { $0.disconnect() } }
        }

        func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
            accepted.withLock { $0.append(newSocket) }
            newSocket.startTLS(settings)
            newSocket.readData(to: TCPSocket.lfData, withTimeout: TestTiming.hangTimeout(10), tag: 1)
        }

        func socketDidSecure(_ sock: TCPSocket) {
            secured.record(sock.tlsProtocolVersion ?? "?")
        }

        func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
            sock.write(Data("echo: ".utf8) + data, withTimeout: TestTiming.hangTimeout(10), tag: 2)
            sock.disconnectAfterWriting()
        }

        func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
            guard sock !== listener else { return }
            ended.record(.disconnected(err))
        }
    }
#endif
