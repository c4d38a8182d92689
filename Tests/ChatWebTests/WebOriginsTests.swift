import ChatWeb
import Testing

/// Which `Origin`s may open `/chat`, as values.
@Suite struct WebOriginsTests {
    @Test func aLoopbackServerAllowsItsOwnOriginUnderEachLoopbackNameNoneAndTheExtraOnes() {
        let origins = WebOrigins(host: "127.0.0.1", port: 8080, extra: ["HTTPS://Chat.Example/", "http://lan.example:80"])
        #expect(
            origins.allowed == [
                "http://127.0.0.1:8080", "http://[::1]:8080", "http://localhost:8080", "https://chat.example", "http://lan.example"
            ])
        for origin in [nil, "http://127.0.0.1:8080", "http://LOCALHOST:8080", "https://chat.example:443", "http://lan.example"] {
            #expect(origins.allows(origin), "\(origin ?? "none")")
        }
        for origin in [
            "http://127.0.0.1:8081", "https://127.0.0.1:8080", "http://evil.example:8080", "null", "", "http://127.0.0.1:8080/x",
            "http://user@127.0.0.1:8080", "ws://127.0.0.1:8080", "http://127.0.0.1:99999", "http://"
        ] {
            #expect(!origins.allows(origin), "\(origin)")
        }
    }

    @Test func anotherInterfaceIsItsOwnNameAndAWildcardHasNone() {
        #expect(WebOrigins(host: "chat.lan", port: 80).allowed == ["http://chat.lan"])
        #expect(WebOrigins(host: "fe80::1", port: 9000, isSecure: true).allowed == ["https://[fe80::1]:9000"])
        #expect(WebOrigins(host: "0.0.0.0", port: 9000).allowed == [])
        #expect(WebOrigins(host: "::", port: 9000, extra: ["http://10.0.0.5:9000"]).allowed == ["http://10.0.0.5:9000"])
        #expect(!WebOrigins(host: "0.0.0.0", port: 9000).allows("http://0.0.0.0:9000"))
    }

    @Test func onlySchemeHostAndPortAreValidOrigins() {
        #expect(WebOrigins.normalized("http://[::1]:8080") == "http://[::1]:8080")
        #expect(WebOrigins.normalized("https://a.example:443") == "https://a.example")
        #expect(WebOrigins.normalized("https://a.example:8443/") == "https://a.example:8443")
        for invalid in ["a.example", "ftp://a.example", "http://a.example/path", "http://a.example?q", "http://:80", "http://a b"] {
            #expect(!WebOrigins.isValid(invalid), "\(invalid)")
        }
    }
}
