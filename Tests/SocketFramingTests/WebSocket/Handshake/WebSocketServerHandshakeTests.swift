import Foundation
import SocketFraming
import Testing

/// `WebSocketServerHandshake`: RFC 6455 §4.2's checks, the 101 answer and every refusal.
@Suite struct WebSocketServerHandshakeTests {
    static let rfc6455Request =
        "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://example.com\r\n"
        + "Sec-WebSocket-Protocol: chat, superchat\r\nSec-WebSocket-Version: 13\r\n\r\n"

    /// The fields of a minimal valid upgrade, to which each test adds or from which it removes.
    static let valid: [(String, String)] = [
        ("Host", "a.example"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")
    ]

    static func head(_ fields: [(String, String)], method: String = "GET", version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        HTTPRequestHead(
            method: method, target: "/ws", version: version, headers: HTTPHeaders(fields.map { HTTPField(name: $0.0, value: $0.1) }))
    }

    static func without(_ name: String) -> [(String, String)] { valid.filter { $0.0 != name } }

    static func replacing(_ name: String, with value: String) -> [(String, String)] {
        valid.map { $0.0 == name ? ($0.0, value) : $0 }
    }

    @Test func the_rfc6455_example_is_an_upgrade_answered_byte_for_byte() throws {
        var parser = HTTPRequestHeadParser()
        guard case let .complete(head, _) = try parser.feed(utf8(Self.rfc6455Request)) else {
            Issue.record("incomplete")
            return
        }
        guard case let .upgrade(request) = WebSocketServerHandshake.validate(head) else {
            Issue.record("not an upgrade")
            return
        }
        #expect(request.target == "/chat")
        #expect(request.host == "server.example.com")
        #expect(request.origin == "http://example.com")
        #expect(request.subprotocols == ["chat", "superchat"])
        #expect(request.extensions == [])
        #expect(request.acceptValue == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let expected =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n\r\n"
        #expect(request.accept(subprotocol: "chat").bytes == utf8(expected))
    }

    @Test func the_101_carries_accepted_extensions_and_extra_headers() throws {
        guard case let .upgrade(request) = WebSocketServerHandshake.validate(Self.head(Self.valid)) else {
            Issue.record("not an upgrade")
            return
        }
        let deflate = WebSocketExtension(name: "permessage-deflate", parameters: [.init(name: "server_no_context_takeover")])
        let head = request.accept(extensions: [deflate], extraHeaders: [("Set-Cookie", "a=1")])
        #expect(head.headers.first("Sec-WebSocket-Extensions") == "permessage-deflate; server_no_context_takeover")
        #expect(head.headers.first("Set-Cookie") == "a=1")
        #expect(!head.headers.contains("Sec-WebSocket-Protocol"))
    }

    @Test func token_lists_match_in_any_case_and_across_fields() {
        let fields =
            Self.without("Connection").map { $0.0 == "Upgrade" ? ("Upgrade", "h2c, WebSocket") : $0 }
            + [("Connection", "keep-alive"), ("connection", "UPGRADE")]
        guard case .upgrade = WebSocketServerHandshake.validate(Self.head(fields)) else {
            Issue.record("not an upgrade")
            return
        }
    }

    @Test func ordinary_requests_are_handed_to_the_application() {
        let plain = Self.head([("Host", "a.example"), ("Accept", "text/html")])
        #expect(WebSocketServerHandshake.validate(plain) == .notUpgrade(plain))
        let otherUpgrade = Self.head([("Host", "a"), ("Upgrade", "h2c"), ("Connection", "Upgrade")], method: "POST")
        #expect(WebSocketServerHandshake.validate(otherUpgrade) == .notUpgrade(otherUpgrade))
    }

    static let refusals: [([(String, String)], String, HTTPVersion, WebSocketUpgradeRefusal, Int)] = [
        (valid, "POST", .http1_1, .methodNotGet("POST"), 400),
        (without("Host"), "GET", .http1_0, .httpVersionTooOld(.http1_0), 400),
        (without("Host"), "GET", .http1_1, .missingHost, 400),
        (without("Upgrade"), "GET", .http1_1, .missingUpgradeToken, 400),
        (replacing("Upgrade", with: "websockets"), "GET", .http1_1, .missingUpgradeToken, 400),
        (without("Connection"), "GET", .http1_1, .missingConnectionToken, 400),
        (replacing("Connection", with: "keep-alive"), "GET", .http1_1, .missingConnectionToken, 400),
        (without("Sec-WebSocket-Version"), "GET", .http1_1, .unsupportedWebSocketVersion(nil), 426),
        (replacing("Sec-WebSocket-Version", with: "8"), "GET", .http1_1, .unsupportedWebSocketVersion("8"), 426),
        (valid + [("Sec-WebSocket-Version", "13")], "GET", .http1_1, .duplicateField("Sec-WebSocket-Version"), 400),
        (without("Sec-WebSocket-Key"), "GET", .http1_1, .missingKey, 400),
        (replacing("Sec-WebSocket-Key", with: "c2hvcnQ="), "GET", .http1_1, .invalidKey("c2hvcnQ="), 400),
        (valid + [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")], "GET", .http1_1, .duplicateField("Sec-WebSocket-Key"), 400),
        (valid + [("Content-Length", "5")], "GET", .http1_1, .bodyNotAllowed, 400),
        (valid + [("Transfer-Encoding", "chunked")], "GET", .http1_1, .bodyNotAllowed, 400),
        (valid + [("Origin", "http://a"), ("Origin", "http://b")], "GET", .http1_1, .duplicateField("Origin"), 400),
        (valid + [("Sec-WebSocket-Protocol", "chat, a b")], "GET", .http1_1, .invalidSubprotocols, 400),
        (valid + [("Sec-WebSocket-Extensions", "permessage-deflate; x=\"a b\"")], "GET", .http1_1, .invalidExtensions, 400)
    ]

    @Test(arguments: WebSocketServerHandshakeTests.refusals)
    func a_bad_upgrade_is_refused_with_its_status(
        fields: [(String, String)], method: String, version: HTTPVersion, refusal: WebSocketUpgradeRefusal, status: Int
    ) {
        #expect(WebSocketServerHandshake.validate(Self.head(fields, method: method, version: version)) == .refused(refusal))
        #expect(refusal.statusCode == status)
        #expect(refusal.response.head.statusCode == status)
        #expect(refusal.response.head.headers.first("Connection") == "close")
    }

    @Test func content_length_zero_is_no_body() {
        guard case .upgrade = WebSocketServerHandshake.validate(Self.head(Self.valid + [("Content-Length", "0")])) else {
            Issue.record("refused")
            return
        }
    }

    @Test func the_426_answer_names_version_13_byte_for_byte() {
        let expected =
            "HTTP/1.1 426 Upgrade Required\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 45\r\n"
            + "Connection: close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n"
            + "unsupported Sec-WebSocket-Version 8, only 13\n"
        #expect(WebSocketUpgradeRefusal.unsupportedWebSocketVersion("8").response.bytes == utf8(expected))
    }

    @Test func the_application_refuses_an_origin_with_403() {
        let refusal = WebSocketUpgradeRefusal.forbidden("origin not allowed")
        #expect(refusal.statusCode == 403)
        #expect(refusal.response.bytes == HTTPResponse.plainText(statusCode: 403, text: "origin not allowed").bytes)
        #expect(refusal.response.head.reason == "Forbidden")
    }
}
