import AsyncSocket
import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import Testing
import TestSupport

/// Every answer on the web port carries `WebRoutes.securityHeaders` (`X-Content-Type-Options: nosniff`
/// among them), not only the route table's: the listener's own refusals before the app (400, 426, 431,
/// 505), the upgrade decision's (403, 404), the chat's `503` once it stopped accepting, and the `101`.
@Suite(.offThePool, TestTiming.timeLimit(minutes: 1)) struct WebPortSecurityHeadersTests {
    /// A refusal as the web port writes it: `plainText` with `extra` fields, then the security fields.
    static func refusal(_ status: String, _ text: String, extra: String = "") -> String {
        "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \((text + "\n").utf8.count)\r\n"
            + "Connection: close\r\n\(extra)\(securityFields)\r\n\(text)\n"
    }

    /// An upgrade to `target` on `port` with `fields` instead of the usual version and key.
    static func upgrade(_ target: String, port: UInt16, fields: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\(fields)\r\n"
    }

    @Test func theListenersOwnRefusalsCarryTheSecurityHeaders() async throws {
        let (chat, web) = try ChatWebServerTests.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        let port = web.port
        let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        let cases: [(String, String)] = [
            (
                Self.upgrade("/chat", port: port, fields: "Sec-WebSocket-Version: 13\r\n"),
                Self.refusal("400 Bad Request", "missing Sec-WebSocket-Key")
            ),
            (
                Self.upgrade("/chat", port: port, fields: key + "Sec-WebSocket-Version: 8\r\n"),
                Self.refusal(
                    "426 Upgrade Required", "unsupported Sec-WebSocket-Version 8, only 13",
                    extra: "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n")
            ),
            (
                "GET / HTTP/1.1\r\nHost: a\r\nX-Padding: \(String(repeating: "p", count: 9000))\r\n\r\n",
                Self.refusal("431 Request Header Fields Too Large", "HTTP head exceeds 8192 bytes")
            ),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", Self.refusal("505 HTTP Version Not Supported", "unsupported version HTTP/2.0")),
            ("HELLO\r\n\r\n", Self.refusal("400 Bad Request", "malformed request line"))
        ]
        for (request, expected) in cases {
            let answer = try await httpExchange(port: port, request)
            #expect(answer == expected, "\(answer.debugDescription)")
        }
    }

    @Test func theChatsOwn503OnceItStoppedAndThe101CarryThem() async throws {
        let (chat, web) = try ChatWebServerTests.start()
        defer { web.stop() }
        let request = ChatOverWebSocketTests.upgrade(port: web.port, origin: nil)
        let connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: web.port, timeout: TestTiming.hangLimit(.seconds(10)))
        try await connection.write(Data(request.utf8))
        var head = Data()
        while !head.contains(Data("\r\n\r\n".utf8)) { head += try await connection.read(timeout: TestTiming.hangLimit(.seconds(10))) }
        #expect(
            String(decoding: head, as: UTF8.self)
                == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\(securityFields)\r\n")
        await connection.close()
        chat.server.stop()
        #expect(
            try await httpExchange(port: web.port, request)
                == Self.refusal("503 Service Unavailable", "the chat server is not accepting connections"))
    }
}
