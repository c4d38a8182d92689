import AsyncSocket
import ChatProtocol
import ChatServer
import ChatTestSupport
import ChatWeb
import Foundation
import Testing
import TestSupport

/// The web port on loopback: `/healthz`, `/metrics` after a chat over real sockets, the refusals, and a
/// scrape checked by Prometheus's own `promtool check metrics`.
@Suite(.offThePool) struct ChatWebServerTests {
    static let healthy =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: close\r\n"
        + "\(securityFields)\r\nok\n"

    /// A chat server and its web port, both on free loopback ports.
    static func start() throws -> (ChatFixture, ChatWebServer) {
        let chat = try ChatFixture()
        let web = ChatWebServer(chat: chat.server, port: 0, group: chat.group)
        try web.start()
        return (chat, web)
    }

    @Test func healthzIsOkWhileTheServerAcceptsAnd503OnceItStopped() async throws {
        let (chat, web) = try Self.start()
        defer { web.stop() }
        #expect(try await get("/healthz", port: web.port) == Self.healthy)
        chat.server.stop()
        let answer = try await get("/healthz", port: web.port)
        #expect(
            answer
                == "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 12\r\n"
                + "Connection: close\r\n\(securityFields)\r\nunavailable\n")
    }

    @Test func otherPathsAre404OtherMethods405AndUpgradesElsewhereThanChat404() async throws {
        let (chat, web) = try Self.start()
        defer { withExtendedLifetime(chat) {} }
        defer { web.stop() }
        #expect(
            try await get("/nothing.html", port: web.port)
                == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 25\r\n"
                + "Connection: close\r\n\(securityFields)\r\nnothing at /nothing.html\n")
        let post = try await httpExchange(port: web.port, "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        #expect(
            post
                == "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 32\r\n"
                + "Connection: close\r\nAllow: GET, HEAD\r\n\(securityFields)\r\nPOST is not allowed on /metrics\n")
        let upgrade =
            "GET /chat/x HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let refused = try await httpExchange(port: web.port, upgrade)
        #expect(
            refused
                == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 24\r\n"
                + "Connection: close\r\n\(securityFields)\r\nno WebSocket at /chat/x\n")
    }

    /// `/metrics` after ann and bob (live only) logged in and ann sent bob 3 direct messages, each
    /// acknowledged before the next (3 group commits), and bob got all 3.
    static func scrapeAfterAChat() async throws -> String {
        let (chat, web) = try Self.start()
        defer { web.stop() }
        let ann = V2Peer(port: chat.server.port, group: chat.group), bob = V2Peer(port: chat.server.port, group: chat.group)
        _ = try await ann.loggedIn("ann", password: nil)
        _ = try await bob.loggedIn("bob", password: nil)
        for id in UInt64(1)...3 {
            ann.send(.directMessage(id: id, to: "bob", text: "message \(id)"))
            let stored = try await ann.received.first { if case .v2(.stored) = $0 { true } else { false } }
            #expect(stored == .v2(.stored(id: id, conversation: "direct:ann bob", sequence: id)))
        }
        let deliveries = try await bob.received.next(3) { if case .v2(.delivery) = $0 { true } else { false } }
        #expect(deliveries.count == 3)
        return try await get("/metrics", port: web.port)
    }

    @Test func aScrapeAfterAChatOverRealSocketsHasItsExactCounts() async throws {
        let answer = try await Self.scrapeAfterAChat()
        #expect(
            answer.hasPrefix(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: "))
        #expect(answer.contains("\r\nConnection: close\r\n\(securityFields)\r\n# HELP chat_connections "))
        let lines = Set(body(of: answer).split(separator: "\n").map(String.init))
        for line in [
            "chat_connections{transport=\"tcp\"} 2", "chat_connections_opened_total{transport=\"tcp\"} 2",
            "chat_logins_total{result=\"accepted\"} 2", "chat_messages_stored_total 3", "chat_messages_delivered_total 3",
            "chat_store_commit_seconds_count 3", "chat_store_commit_seconds_bucket{le=\"+Inf\"} 3",
            "chat_messages_refused_total{reason=\"unknownRecipient\"} 0", "chat_routing_queue_depth 0",
            "# TYPE chat_heartbeats_answered_total counter"
        ] {
            #expect(lines.contains(line), "\(line) not in the scrape:\n\(answer)")
        }
    }

    /// Where Debian's `prometheus` package (scripts/setup.sh) puts `promtool`; nil when it is missing.
    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: promtool != nil, "promtool is missing: scripts/setup.sh installs Debian's prometheus package, which ships it"))
    func promtoolChecksAScrapeClean() async throws {
        let (status, output) = try await Self.promtoolCheck(body(of: try await Self.scrapeAfterAChat()))
        #expect(status == 0, "promtool: \(output)")
        #expect(output == "")
    }

    @Test(.enabled(if: promtool != nil, "promtool is missing: scripts/setup.sh installs Debian's prometheus package, which ships it"))
    func promtoolRefusesAScrapeWithAnUnescapedLabelValue() async throws {
        let (status, output) = try await Self.promtoolCheck("# HELP x_total X.\n# TYPE x_total counter\nx_total{a=\"b\nc\"} 1\n")
        #expect(status != 0)
        #expect(output.contains("contains unescaped new-line"), "\(output)")
    }

    /// `promtool check metrics` on `scrape`: its parser of the text format and its lint rules (counters
    /// end in `_total`, HELP present, …); its exit status and everything it wrote.
    static func promtoolCheck(_ scrape: String) async throws -> (Int32, String) {
        let check = try ChildProcess(promtool ?? "promtool", ["check", "metrics"])
        defer { check.stop() }
        check.write(Data(scrape.utf8))
        check.closeInput()
        let status = try await check.exitStatus()
        return (status, String(decoding: check.allOutput, as: UTF8.self))
    }

    @Test func imServerServesTheWebPortGivenWebPort() async throws {
        let server = try ChildProcess.startProduct(
            "im-server", ["--port", "0", "--no-discovery", "--store", ":memory:", "--web-port", "0", "--web-host", "127.0.0.1"])
        defer { server.stop() }
        let listening = logText(try await server.lines.next())
        #expect(listening.hasPrefix("im-server listening on 127.0.0.1:"))
        let web = logText(try await server.lines.next())
        let prefix = "im-server web port on http://127.0.0.1:", suffix = "/ (chat at /chat, metrics at /metrics, health at /healthz)"
        #expect(web.hasPrefix(prefix) && web.hasSuffix(suffix), "\(web)")
        let port = try #require(UInt16(web.dropFirst(prefix.count).dropLast(suffix.count)))
        #expect(try await get("/healthz", port: port) == Self.healthy)
        let metrics = try await get("/metrics", port: port)
        #expect(metrics.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        #expect(body(of: metrics).contains("\nchat_connections{transport=\"tcp\"} 0\n"))
    }
}
