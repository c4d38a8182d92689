import AsyncSocket
import Foundation
import LongLink
import Testing
import TestSupport

/// LongLink over TLS (``LongLinkClient/Configuration/tls``, ``LongLinkServer/Configuration/tls``):
/// every reconnect handshakes again, resuming the session of the connection before.
@Suite struct LongLinkTLSTests {
    @Test func aReconnectHandshakesAgainAndResumesTheSession() async throws {
        let files = try await TestCertificates.shared()
        let harness = LinkHarness()
        let server = TLSConfiguration.server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
        let port = unusedLoopbackPort()
        let first = try harness.makeServer(port: port) { $0.tls = server }
        let client = harness.makeClient(port: port) {
            var tls = TLSConfiguration.client(peerName: "localhost")
            tls.trustRoots = .files([files.caCertificate])
            tls.handshakeTimeout = 8  // settings of this test's own: a session store no other test shares
            $0.tls = tls
        }
        defer { client.disconnect() }
        client.connect()
        #expect(try await harness.clientEvents.next(2) == ["connected to 127.0.0.1:\(port)", "secured with TLSv1.3"])
        client.send("hello")
        // The echo: by then the server's session ticket (sent after the handshake) has been read.
        #expect(try await harness.clientEvents.next() == "received echo: hello")
        first.stop()
        #expect(try await harness.clientEvents.first { $0.hasPrefix("reconnect attempt 2") } == "reconnect attempt 2 in 2 s")
        let second = try harness.makeServer(port: port) { $0.tls = server }
        defer { second.stop() }
        await harness.advance(by: .seconds(2))
        #expect(try await harness.clientEvents.next(2) == ["connected to 127.0.0.1:\(port)", "secured with TLSv1.3 (session resumed)"])
        client.send("after the restart")
        #expect(try await harness.clientEvents.next() == "received echo: after the restart")
    }
}
