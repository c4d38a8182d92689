import AsyncSocket
import ChatClient
@testable import ChatProtocol
import ChatTestSupport
import Foundation
@testable import im_client
@testable import im_server
import LongLink
import Testing
import TestSupport

/// The chat over TLS (docs/PROTOCOL.md "The chat over TLS"): `im-server --tls-cert --tls-key`,
/// `im-client --tls [--ca FILE]`; certificates made by `openssl` at test time.
@Suite struct ChatTLSTests {
    private func client(
        _ name: String, port: UInt16, ca: String, host: String = "localhost", group: EventLoopGroup
    ) throws -> (ChatClient, EventRecorder<String>, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("im-tls-\(UUID().uuidString.prefix(8))").path
        var options = try ClientOptions(arguments: [name, "--host", host, "--port", "\(port)", "--ca", ca, "--data-dir", directory])
        options.wait = .seconds(30)
        let configuration = options.configuration(host: host, port: port, password: "\(name)'s password", style: .pipe)
        let output = EventRecorder<String>()
        let client = try ChatClient(
            configuration: configuration, group: group, output: { output.record($0) },
            onFinish: { output.record("finished \($0)") })
        return (client, output, directory)
    }

    @Test func twoClientsChatOverTLS() async throws {
        let files = try await TestCertificates.shared()
        let options = try ServerOptions(arguments: ["--tls-cert", files.serverCertificate, "--tls-key", files.serverKey])
        let chat = try ChatFixture(tls: options.tlsConfiguration)
        let group = EventLoopGroup(numberOfThreads: 1, name: "chat-tls")
        defer { group.shutdown() }
        let (ann, annOut, annDirectory) = try client("ann", port: chat.server.port, ca: files.caCertificate, group: group)
        let (bob, bobOut, bobDirectory) = try client("bob", port: chat.server.port, ca: files.caCertificate, group: group)
        defer {
            ann.stop()
            bob.stop()
            try? FileManager.default.removeItem(atPath: annDirectory)
            try? FileManager.default.removeItem(atPath: bobDirectory)
        }
        ann.start()
        let first = try await annOut.next(2)
        #expect(first == ["* connected to 127.0.0.1:\(chat.server.port)", "* logged in as ann; online: nobody else"])
        bob.start()
        _ = try await bobOut.first { $0.hasPrefix("* logged in as bob") }
        ann.handle(line: "/to bob over TLS")
        #expect(try await bobOut.first { $0.hasPrefix("ann") } == "ann (direct): over TLS")
        #expect(try await annOut.first { $0.hasPrefix("stored") } == "stored #1")
    }

    @Test func aClientThatDoesNotTrustTheServersCertificateSaysWhyAndSendsNothing() async throws {
        let files = try await TestCertificates.shared()
        let chat = try ChatFixture(
            tls: .server(certificateChain: .file(files.selfSignedCertificate), privateKey: .file(files.selfSignedKey)))
        let group = EventLoopGroup(numberOfThreads: 1, name: "chat-tls-untrusted")
        defer { group.shutdown() }
        let (ann, annOut, directory) = try client("ann", port: chat.server.port, ca: files.caCertificate, group: group)
        defer {
            ann.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        ann.start()
        let lines = try await annOut.next(2)
        #expect(
            lines == [
                "* connected to 127.0.0.1:\(chat.server.port)",
                "* disconnected (\(LongLinkClient<ChatCodec>.DisconnectReason.network(.tls(.certificateUntrusted("self-signed certificate")))))"
            ])
        #expect(chat.server.onlineUsers == [])
    }
}
