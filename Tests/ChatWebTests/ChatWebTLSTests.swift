import AsyncSocket
import ChatProtocol
import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import LongLink
import Testing
import TestSupport

/// The web port over TLS (issue 34 §1: with `--tls-cert/--tls-key` the page and the socket are served
/// over HTTPS/WSS), on loopback with the test CA's certificate for 127.0.0.1: the page and `/healthz`
/// over HTTPS, the chat over WSS, the own origin `https://`, and im-server's flags.
@Suite(.offThePool, TestTiming.timeLimit(minutes: 1)) struct ChatWebTLSTests {
    /// A chat server (plaintext TCP) and its web port over TLS, both on free loopback ports.
    static func start() async throws -> (ChatFixture, ChatWebServer, TestCertificates) {
        let files = try await TestCertificates.shared()
        let chat = try ChatFixture()
        let tls = TLSConfiguration.server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
        let web = ChatWebServer(chat: chat.server, port: 0, tls: tls, group: chat.group)
        try web.start()
        return (chat, web, files)
    }

    /// Client settings trusting the test CA only, verifying 127.0.0.1.
    static func client(_ files: TestCertificates) -> TLSConfiguration {
        var tls = TLSConfiguration.client(peerName: "127.0.0.1")
        tls.trustRoots = .files([files.caCertificate])
        return tls
    }

    @Test func healthzOverHTTPSAndThePlaintextOriginRefusedTheHTTPSOneNot() async throws {
        let (chat, web, files) = try await Self.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        #expect(web.isSecure)
        #expect(web.origins.allowed == ["https://127.0.0.1:\(web.port)", "https://[::1]:\(web.port)", "https://localhost:\(web.port)"])
        let healthz = try await httpExchange(
            port: web.port, tls: Self.client(files), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(web.port)\r\n\r\n")
        #expect(healthz == ChatWebServerTests.healthy)
        let origin = "http://127.0.0.1:\(web.port)"
        let refused = try await httpExchange(
            port: web.port, tls: Self.client(files), ChatOverWebSocketTests.upgrade(port: web.port, origin: origin))
        let text = "the origin \(origin) may not open the chat\n"
        #expect(
            refused
                == "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\n"
                + "Connection: close\r\n\(securityFields)\r\n\(text)")
        #expect(chat.server.metrics.connectionsOpened[.websocket]?.value == 0)
    }

    @Test func aWSSUserAndATCPUserExchangeDirectMessages() async throws {
        let (chat, web, files) = try await Self.start()
        defer { web.stop() }
        let ann = V2Peer(
            endpoint: try Endpoint(webSocket: "wss://127.0.0.1:\(web.port)/chat"), tls: Self.client(files), group: chat.group)
        let bob = V2Peer(port: chat.server.port, group: chat.group)
        guard case .loginAccepted("ann", [], _, _, true)? = try await ann.loggedIn("ann", password: "ann's secret") else {
            Issue.record("ann was not logged in over wss")
            return
        }
        _ = try await bob.loggedIn("bob", password: "bob's secret")
        #expect(try await ann.next() == .presence(name: "bob", online: true))
        ann.send(.directMessage(id: 1, to: "bob", text: "hi bob, over wss"))
        #expect(try await ann.next() == .stored(id: 1, conversation: "direct:ann bob", sequence: 1))
        let delivery = ChatMessageV2.delivery(
            from: "ann", text: "hi bob, over wss", isDirect: true, conversation: "direct:ann bob", sequence: 1,
            time: Date(timeIntervalSince1970: 0))
        #expect(try await ann.next() == delivery)
        #expect(try await bob.next() == delivery)
        #expect(chat.server.metrics.connectionsOpened[.websocket]?.value == 1)
    }

    /// Python's own TLS (the `ssl` module: OpenSSL through another stack) as a browser would: `GET
    /// /healthz` with `http.client` verifying the certificate against the test CA, then a WebSocket
    /// upgrade to `/chat` with the page's `https://` origin, checked down to `Sec-WebSocket-Accept`.
    static let pythonClient = """
        import base64, hashlib, http.client, os, socket, ssl, sys
        port, ca = int(sys.argv[1]), sys.argv[2]
        context = ssl.create_default_context(cafile=ca)
        page = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        page.request("GET", "/healthz")
        answer = page.getresponse()
        print(answer.status, answer.getheader("X-Content-Type-Options"), answer.read().decode().strip())
        tls = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1")
        key = base64.b64encode(os.urandom(16)).decode()
        tls.sendall(("GET /chat HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
            "Sec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\nOrigin: https://127.0.0.1:%d\\r\\n\\r\\n" % (port, key, port)).encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            chunk = tls.recv(4096)
            if not chunk: break
            head += chunk
        expected = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        print(head.split(b"\\r\\n")[0].decode(), ("\\r\\nSec-WebSocket-Accept: " + expected + "\\r\\n").encode() in head)
        """

    @Test func pythonsSSLFetchesHealthzAndUpgradesOverWSS() async throws {
        let (chat, web, files) = try await Self.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        let python = try ChildProcess("/usr/bin/python3", ["-c", Self.pythonClient, String(web.port), files.caCertificate])
        defer { python.stop() }
        let status = try await python.exitStatus(within: TestTiming.hangLimit(.seconds(20)))
        #expect(status == 0, "\(String(decoding: python.allOutput, as: UTF8.self))")
        #expect(
            String(decoding: python.allOutput, as: UTF8.self) == "200 nosniff ok\nHTTP/1.1 101 Switching Protocols True\n")
    }

    @Test func imServerServesTheWebPortOverTLSGivenTLSFlags() async throws {
        let files = try await TestCertificates.shared()
        let server = try ChildProcess.startProduct(
            "im-server",
            [
                "--port", "0", "--no-discovery", "--store", ":memory:", "--web-port", "0", "--tls-cert", files.serverCertificate,
                "--tls-key", files.serverKey
            ])
        defer { server.stop() }
        _ = try await server.lines.next()  // listening on … with TLS
        let web = logText(try await server.lines.next())
        let prefix = "im-server web port on https://127.0.0.1:", suffix = "/ (chat at /chat, metrics at /metrics, health at /healthz)"
        #expect(web.hasPrefix(prefix) && web.hasSuffix(suffix), "\(web)")
        let port = try #require(UInt16(web.dropFirst(prefix.count).dropLast(suffix.count)))
        let healthz = try await httpExchange(
            port: port, tls: Self.client(files), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(healthz == ChatWebServerTests.healthy)
    }
}
