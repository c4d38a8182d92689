import SocketFraming
import Testing

/// `WebSocketClientHandshake`: the request a client sends and its checks of the answer (RFC 6455 §4.1).
@Suite struct WebSocketClientHandshakeTests {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    static func handshake(extensions: [WebSocketExtension] = []) throws -> WebSocketClientHandshake {
        WebSocketClientHandshake(
            url: try WebSocketURL("ws://server.example.com/chat"), subprotocols: ["chat", "superchat"], extensions: extensions,
            headers: [("Origin", "http://example.com")], key: key)
    }

    static func answer(status: Int = 101, _ fields: [(String, String)]) -> HTTPResponseHead {
        HTTPResponseHead(statusCode: status, headers: HTTPHeaders(fields.map { HTTPField(name: $0.0, value: $0.1) }))
    }

    static let good: [(String, String)] = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept)]

    @Test func the_request_for_the_rfc6455_example_byte_for_byte() throws {
        let expected =
            "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: chat, superchat\r\nOrigin: http://example.com\r\n\r\n"
        #expect(try Self.handshake().request.bytes == utf8(expected))
    }

    @Test func the_request_passes_our_own_server_checks() throws {
        let handshake = try Self.handshake(extensions: [
            WebSocketExtension(name: "permessage-deflate", parameters: [.init(name: "client_max_window_bits")])
        ])
        var parser = HTTPRequestHeadParser()
        guard case let .complete(head, _) = try parser.feed(handshake.request.bytes),
            case let .upgrade(request) = WebSocketServerHandshake.validate(head)
        else {
            Issue.record("not a valid upgrade")
            return
        }
        #expect(request.extensions == handshake.extensions)
        #expect(
            try handshake.validate(request.accept(subprotocol: "superchat", extensions: handshake.extensions))
                == .init(subprotocol: "superchat", extensions: handshake.extensions))
    }

    @Test func a_fresh_key_each_time_and_ipv6_hosts_in_brackets() throws {
        let url = try WebSocketURL("wss://[::1]:8443/x?y=1")
        let first = WebSocketClientHandshake(url: url)
        #expect(first.key != WebSocketClientHandshake(url: url).key)
        #expect(WebSocketHandshake.isValidKey(first.key))
        #expect(first.request.target == "/x?y=1")
        #expect(first.request.headers.first("Host") == "[::1]:8443")
        #expect(!first.request.headers.contains("Sec-WebSocket-Protocol"))
    }

    @Test func the_rfc6455_answer_is_accepted() throws {
        #expect(
            try Self.handshake().validate(Self.answer(Self.good + [("Sec-WebSocket-Protocol", "chat")]))
                == .init(subprotocol: "chat", extensions: []))
        #expect(try Self.handshake().validate(Self.answer(Self.good)) == .init(subprotocol: nil, extensions: []))
    }

    static let badAnswers: [(HTTPResponseHead, WebSocketClientHandshakeError)] = [
        (
            answer(status: 302, [("Location", "ws://elsewhere/")]),
            WebSocketClientHandshakeError.redirectRefused(status: 302, location: "ws://elsewhere/")
        ),
        (answer(status: 301, []), .redirectRefused(status: 301, location: nil)),
        (answer(status: 403, good), .unexpectedStatus(403)),
        (answer(status: 200, good), .unexpectedStatus(200)),
        (answer([("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept)]), .missingUpgradeToken),
        (answer([("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept)]), .missingConnectionToken),
        (answer([("Upgrade", "websocket"), ("Connection", "Upgrade")]), .acceptMismatch(nil)),
        (answer([("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "x")]), .acceptMismatch("x")),
        (answer(good + [("Sec-WebSocket-Accept", accept)]), .acceptMismatch(accept)),
        (answer(good + [("Sec-WebSocket-Protocol", "mqtt")]), .unofferedSubprotocol("mqtt")),
        (answer(good + [("Sec-WebSocket-Protocol", "chat, superchat")]), .multipleSubprotocols),
        (answer(good + [("Sec-WebSocket-Extensions", "permessage-deflate")]), .unofferedExtension("permessage-deflate")),
        (answer(good + [("Sec-WebSocket-Extensions", "permessage-deflate;")]), .invalidExtensions)
    ]

    @Test(arguments: WebSocketClientHandshakeTests.badAnswers)
    func a_bad_answer_is_refused(response: HTTPResponseHead, error: WebSocketClientHandshakeError) throws {
        let handshake = try Self.handshake()
        #expect(throws: error) { try handshake.validate(response) }
    }
}
