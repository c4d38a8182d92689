import SocketFraming
import Testing

/// `WebSocketURL` (RFC 6455 §3).
@Suite struct WebSocketURLTests {
    @Test(arguments: [
        ("ws://example.com", false, "example.com", 80, "/", "example.com"),
        ("wss://Example.COM/chat?room=1&x=%20", true, "example.com", 443, "/chat?room=1&x=%20", "example.com"),
        ("WS://example.com:80/", false, "example.com", 80, "/", "example.com"),
        ("ws://example.com:443/", false, "example.com", 443, "/", "example.com:443"),
        ("wss://example.com:80", true, "example.com", 80, "/", "example.com:80"),
        ("ws://127.0.0.1:9000?q", false, "127.0.0.1", 9000, "/?q", "127.0.0.1:9000"),
        ("ws://[::1]:9000/a", false, "::1", 9000, "/a", "[::1]:9000"),
        ("wss://[2001:DB8::1]/", true, "2001:db8::1", 443, "/", "[2001:db8::1]"),
        ("ws://[::ffff:192.0.2.1]", false, "::ffff:192.0.2.1", 80, "/", "[::ffff:192.0.2.1]")
    ])
    func valid_urls(text: String, secure: Bool, host: String, port: Int, resource: String, hostHeader: String) throws {
        let url = try WebSocketURL(text)
        #expect(url.isSecure == secure)
        #expect(url.host == host)
        #expect(url.port == port)
        #expect(url.resourceName == resource)
        #expect(url.hostHeader == hostHeader)
    }

    @Test(arguments: [
        ("http://example.com/", WebSocketURL.ParseError.unsupportedScheme),
        ("example.com/chat", .unsupportedScheme),
        ("ws:/example.com", .unsupportedScheme),
        ("ws://user:pw@example.com/", .userinfoNotAllowed),
        ("ws://example.com/chat#top", .fragmentNotAllowed),
        ("ws://example.com/#", .fragmentNotAllowed),
        ("ws:///chat", .invalidHost),
        ("ws://:80/", .invalidHost),
        ("ws://[::1/", .invalidHost),
        ("ws://[example.com]/", .invalidHost),
        ("ws://[::1]x/", .invalidHost),
        ("ws://exa$mple.com/", .invalidHost),
        ("ws://example.com:/", .invalidPort),
        ("ws://example.com:0/", .invalidPort),
        ("ws://example.com:65536/", .invalidPort),
        ("ws://example.com:+80/", .invalidPort),
        ("ws://example.com:8a/", .invalidPort),
        ("ws://example.com/a b", .invalidCharacter),
        ("ws://exämple.com/", .invalidCharacter)
    ])
    func refused_urls(text: String, error: WebSocketURL.ParseError) {
        #expect(throws: error) { try WebSocketURL(text) }
    }

    @Test func written_back() throws {
        #expect(try WebSocketURL("WSS://[::1]:443/x?y").description == "wss://[::1]/x?y")
    }
}
