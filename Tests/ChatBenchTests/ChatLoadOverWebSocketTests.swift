import ChatServer
import ChatWeb
import Foundation
import SocketBench
import Testing
import TestSupport

@testable import ChatBench

/// `socket-bench client chat --websocket`: short load runs whose users upgrade at an in-process web
/// port's `/chat` (ChatWeb's `ChatWebServer`) before logging in: exact counts, not speed.
@Suite struct ChatLoadOverWebSocketTests {
    /// A chat server (memory store, cheap hashes, a login deadline only a hang reaches) and its web
    /// port serving no files, both on free loopback ports.
    static func start() throws -> (ChatServer, ChatWebServer) {
        var limits = ChatServer.Limits()
        limits.loginTimeout = TestTiming.hangLimit(.seconds(10))
        let server = ChatServer(host: "127.0.0.1", port: 0, passwordHasher: PasswordHasher(limits: .minimum), limits: limits)
        try server.start()
        let web = ChatWebServer(chat: server, port: 0, files: StaticFiles(files: [:]))
        try web.start()
        return (server, web)
    }

    /// 6 users at `port` over WebSocket, 100 direct messages and 10 broadcasts a second for 0.5 s.
    static func options(port: UInt16) -> LoadOptions {
        var options = LoadOptions()
        options.servers = [ServerAddress(host: "127.0.0.1", port: port)]
        options.webSocketPath = LoadOptions.defaultWebSocketPath
        options.users = 6
        options.rates.directRate = 100
        options.rates.broadcastRate = 10
        options.timing.duration = 0.5
        options.timing.heartbeat = ChatLoadRunTests.heartbeatLongerThanTheRun  // each connection beats once
        options.timing.loginTimeout = TestTiming.hangTimeout(30)
        options.timing.drain = TestTiming.hangTimeout(10)
        return options
    }

    @Test(arguments: [false, true])
    func everyDeliveryOverWebSocketArrivesExactlyOnce(stored: Bool) async throws {
        let (server, web) = try Self.start()
        defer { server.stop() }
        defer { web.stop() }
        var options = Self.options(port: web.port)
        options.stored = stored
        #expect(options.protocolName == (stored ? "v2-stored-ws" : "v2-ws"))
        let result = await runOnAThread { [options] in ChatBench.runLoad(options) }
        #expect(result.isClean, "\(result.summary)")
        #expect(result.logins.loggedIn == 6 && result.logins.loginFailures == 0)
        #expect(result.traffic.sentDirect == 50 && result.traffic.sentBroadcast == 5)
        #expect(result.deliveries.expected == 75 && result.deliveries.delivered == 75 && result.missing == 0)
        #expect(result.deliveries.duplicates == 0 && result.deliveries.outOfOrder == 0 && result.deliveries.misdelivered == 0)
        #expect(result.answers.acknowledged == 55 && result.answers.unacknowledged == 0)
        #expect(
            result.heartbeats.heartbeatsSent == 6 && result.heartbeats.heartbeatsAnswered == 6
                && result.heartbeats.heartbeatsMissed == 0)
        // Every session came over WebSocket, none over TCP.
        #expect(server.metrics.connectionsOpened[.websocket]?.value == 6)
        #expect(server.metrics.connectionsOpened[.tcp]?.value == 0)
    }

    @Test func aRefusedUpgradeFailsEveryLoginWithItsStatus() async throws {
        let web = ChatWebServer(routes: WebRoutes(), port: 0)  // no chat: every upgrade is 404
        try web.start()
        defer { web.stop() }
        var options = Self.options(port: web.port)
        options.users = 3
        let result = await runOnAThread { [options] in ChatBench.runLoad(options) }
        #expect(!result.isClean)
        #expect(result.logins.loggedIn == 0 && result.failures.connectionFailures == 3)
        let reason = try #require(result.failures.failureReasons.first)
        #expect(reason.hasSuffix(": WebSocket upgrade refused (404): WebSocket handshake answered by status 404, not 101"), "\(reason)")
    }

    @Test func websocketParsesAndNeedsVersion2() throws {
        let options = try LoadOptions.parse(["--server", "127.0.0.1:8080", "--websocket", "--users", "2"])
        #expect(options.webSocketPath == "/chat" && options.users == 2 && options.protocolName == "v2-ws")
        #expect(try LoadOptions.parse([]).webSocketPath == nil)
        #expect(throws: ArgumentError("--websocket needs --protocol 2 (the chat over WebSocket is version 2 only)")) {
            try LoadOptions.parse(["--websocket", "--protocol", "1"])
        }
        let split = try ChatBench.splitCommon(["--websocket", "--users", "5"])
        #expect(split.rest == ["--websocket", "--users", "5"])
    }
}
