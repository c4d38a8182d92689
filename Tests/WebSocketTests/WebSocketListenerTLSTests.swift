import AsyncSocket
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// ``WebSocketListener/Configuration/tls``: every connection is TLS from its first byte (`wss://`), with
/// the test CA's certificate for 127.0.0.1; a plaintext `ws://` client gets no answer.
@Suite(.offThePool, TestTiming.timeLimit(minutes: 1)) struct WebSocketListenerTLSTests {
    @Test func aWSSClientEchoesThroughATLSListenerAndAPlaintextOneIsNotAnswered() async throws {
        let files = try await TestCertificates.shared()
        var configuration = WebSocketListener.Configuration(port: 0)
        configuration.tls = .server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
        let listener = try await WebSocketConnectionListener.bind(configuration: configuration)
        let iteration = Task {
            for await connection in listener {
                Task { for await message in connection.messages { try await connection.send(message) } }
            }
        }
        defer { iteration.cancel() }
        var client = WebSocket.ClientConfiguration()
        client.tls = .client(peerName: "127.0.0.1")
        client.tls?.trustRoots = .files([files.caCertificate])
        let connection = try await WebSocketConnection.connect(
            to: "wss://127.0.0.1:\(listener.port)/echo", configuration: client)
        var messages = connection.messages.makeAsyncIterator()
        try await connection.send(.text("over TLS ✓"))
        #expect(await messages.next() == .text("over TLS ✓"))
        await connection.close()

        // A plaintext upgrade is read as a TLS handshake: refused, closed with no HTTP answer.
        let plain = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: TestTiming.hangLimit(.seconds(10)))
        try await plain.write(Data("GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        var answer = Data()
        do {
            while true { answer += try await plain.read(timeout: TestTiming.hangLimit(.seconds(10))) }
        } catch {
            // The end: the TLS handshake failed.
        }
        #expect(!String(decoding: answer, as: UTF8.self).contains("HTTP/1.1"))
        await plain.close()
        await listener.close()
    }
}
