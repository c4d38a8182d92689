import AsyncSocket
import Foundation
import Testing
import TestSupport
@testable import SocketBench

/// `socket-bench server discard` (the one-direction sink of docs/BENCHMARKS.md "Issue 13"): everything
/// sent is read and dropped, nothing comes back, plaintext and TLS alike.
@Suite struct EchoServerDiscardTests {
    /// 8 MiB out, then the write side closed: the server reads to the end of the stream (the FIN comes
    /// after every byte, so a server that stopped reading would never see it and the read below would
    /// time out) and then closes; the client reads nothing but that close.
    @Test(arguments: [false, true])
    func everyByteIsReadAndNoneComesBack(overTLS: Bool) async throws {
        let files = try await TestCertificates.shared()
        let serverTLS = TLSConfiguration.server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
        let server = EchoServer(mode: .discard, loops: 1, tls: overTLS ? serverTLS : nil)
        let port = try server.start(host: "127.0.0.1", port: 0)
        defer { server.stop() }
        var clientTLS = TLSConfiguration.client(peerName: "localhost")
        clientTLS.trustRoots = .files([files.caCertificate])
        let client = try await TCPConnection.connect(
            toHost: "127.0.0.1", port: port, timeout: .seconds(5),
            tls: overTLS ? clientTLS : nil)
        let chunk = Data((0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for _ in 0..<128 { try await client.write(chunk, timeout: .seconds(20)) }
        await client.closeWrite()
        await #expect(throws: SocketError.closedByPeer) { try await client.read(timeout: .seconds(20)) }
        await client.close()
    }
}
