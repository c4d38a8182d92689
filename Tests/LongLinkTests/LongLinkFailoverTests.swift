import AsyncSocket
import Foundation
import LongLink
import Testing
import TestSupport

/// A link with several servers (``LongLinkClient/Configuration/endpoints``): the first connect goes to
/// the first endpoint, each reconnect attempt to the next one, round robin, on the unchanged schedule.
/// Virtual time (``LinkHarness``: jitter 0, so the delays are exactly 0 s, 2 s, 4 s).
@Suite struct LongLinkFailoverTests {
    private let refused = "connect failed: connect: Connection refused (errno 111)"

    private func loopback(_ port: UInt16) -> Endpoint { Endpoint(host: "127.0.0.1", port: port) }

    @Test func aFirstEndpointThatRefusesIsPassedOverForTheSecond() async throws {
        let harness = LinkHarness()
        let nobody = ReservedLoopbackPort()
        defer { nobody.release() }
        let server = try harness.makeServer()
        defer { server.stop() }
        let client = harness.makeClient(port: nobody.port) { $0.endpoints.append(loopback(server.port)) }
        defer { client.disconnect() }
        client.connect()
        let events = try await harness.clientEvents.next(3)
        #expect(events == [refused, "reconnect attempt 1 to 127.0.0.1:\(server.port) in 0 s", "connected to 127.0.0.1:\(server.port)"])
        client.send("hello")
        #expect(try await harness.clientEvents.next() == "received echo: hello")
    }

    @Test func aServerThatClosesSendsTheReconnectToTheNextServer() async throws {
        let harness = LinkHarness()
        let first = try harness.makeServer()
        let second = try harness.makeServer()
        defer { second.stop() }
        let client = harness.makeClient(port: first.port) { $0.endpoints.append(loopback(second.port)) }
        defer { client.disconnect() }
        client.greeting = "hello"
        client.connect()
        #expect(try await harness.clientEvents.next(2) == ["connected to 127.0.0.1:\(first.port)", "received echo: hello"])
        first.stop()
        // Taken first, so a failure shows what arrived (an awaited expression's value is not printed).
        let failover = try await harness.clientEvents.next(3)
        #expect(
            failover == [
                "disconnected (by server)",
                "reconnect attempt 1 to 127.0.0.1:\(second.port) in 0 s",
                "connected to 127.0.0.1:\(second.port)"
            ])
        client.send("on the second")
        #expect(try await harness.clientEvents.next(2) == ["received echo: hello", "received echo: on the second"])
    }

    @Test func theAttemptsGoRoundRobinOnTheScheduleAndWrapAroundToTheFirst() async throws {
        let harness = LinkHarness()
        // The first port goes from the reservation to the server with no moment in between (SO_REUSEPORT
        // on both), as in LongLinkClientTests.configuredHealthyTimeStartsTheScheduleOverAfterAConnectionThatWasRetried.
        let reserved = [ReservedLoopbackPort(sharedWithServer: true), ReservedLoopbackPort(), ReservedLoopbackPort()]
        defer { reserved.forEach { $0.release() } }
        let ports = reserved.map(\.port)
        let client = harness.makeClient(port: ports[0]) { $0.endpoints = ports.map(loopback) }
        defer { client.disconnect() }
        client.connect()
        let start = try await harness.clientEvents.next(4)
        #expect(
            start == [
                refused, "reconnect attempt 1 to 127.0.0.1:\(ports[1]) in 0 s", refused,
                "reconnect attempt 2 to 127.0.0.1:\(ports[2]) in 2 s"
            ])
        // The schedule's delays are as with one server: nothing before the 2 s are up.
        await harness.advance(by: .milliseconds(1999))
        await harness.drainEventQueues()
        #expect(harness.clientEvents.pending == [])
        await harness.advance(by: .milliseconds(1))
        #expect(try await harness.clientEvents.next(2) == [refused, "reconnect attempt 3 to 127.0.0.1:\(ports[0]) in 4 s"])
        // After the last endpoint, the first again: a server there now is reached.
        let server = try harness.makeServer(port: ports[0], reusePort: true)
        defer { server.stop() }
        reserved[0].release()
        await harness.advance(by: .seconds(4))
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(ports[0])")
    }

    @Test func connectingAgainStartsOverAtTheFirstEndpoint() async throws {
        let harness = LinkHarness()
        let reserved = [ReservedLoopbackPort(), ReservedLoopbackPort()]
        defer { reserved.forEach { $0.release() } }
        let ports = reserved.map(\.port)
        let client = harness.makeClient(port: ports[0]) {
            $0.endpoints = ports.map(loopback)
            $0.reconnectDelays = [.zero]
        }
        defer { client.disconnect() }
        client.connect()
        let giveUp = [refused, "reconnect attempt 1 to 127.0.0.1:\(ports[1]) in 0 s", refused, "server unavailable"]
        #expect(try await harness.clientEvents.next(4) == giveUp)
        // The first attempt went to the first endpoint again, so the retry goes to the second again.
        client.connect()
        #expect(try await harness.clientEvents.next(4) == giveUp)
    }

    @Test func noEndpointIsABadConfigurationReportedAtConnect() async throws {
        let harness = LinkHarness()
        let client = harness.makeClient(port: 1) { $0.endpoints = [] }
        defer { client.disconnect() }
        client.connect()
        let error = SocketError.badConfig("no endpoint to connect to (Configuration.endpoints is empty)")
        #expect(try await harness.clientEvents.next(2) == ["connect failed: \(error)", "server unavailable"])
    }

    @Test func oneServerConfigurationsAreTheFirstEndpoint() {
        typealias Configuration = LongLinkClient<TextCodec>.Configuration
        var configuration = Configuration(host: "chat.example", port: 7000)
        #expect(configuration.endpoints == [Endpoint(host: "chat.example", port: 7000)])
        configuration.endpoints.append(Endpoint(host: "::1", port: 7001))
        configuration.port = 7002
        #expect(configuration.endpoints == [Endpoint(host: "chat.example", port: 7002), Endpoint(host: "::1", port: 7001)])
        #expect(configuration.host == "chat.example")
        let none = Configuration(endpoints: [])
        #expect(none.host == "" && none.port == 0)
    }

    @Test func endpointsAndTheEventsNamingThemAreWrittenHostColonPortWithIPv6InBrackets() {
        typealias Event = LongLinkClient<TextCodec>.Event
        #expect("\(Endpoint(host: "127.0.0.1", port: 7000))" == "127.0.0.1:7000")
        #expect("\(Endpoint(host: "chat.example", port: 7000))" == "chat.example:7000")
        #expect("\(Endpoint(host: "::1", port: 7000))" == "[::1]:7000")
        #expect("\(Event.connected(host: "::1", port: 7000))" == "connected to [::1]:7000")
        #expect(
            "\(Event.reconnecting(attempt: 2, delay: .milliseconds(2318), endpoint: Endpoint(host: "::1", port: 7001)))"
                == "reconnect attempt 2 to [::1]:7001 in 2.318 s")
        #expect("\(Event.reconnecting(attempt: 2, delay: .milliseconds(2318)))" == "reconnect attempt 2 in 2.318 s")
    }

    /// With no peer name set, each connection's server is verified as the endpoint it went to: the
    /// certificate (localhost, 127.0.0.1, ::1) does not name 127.0.0.2, so the first node fails under
    /// that name and the second is verified as 127.0.0.1.
    @Test func overTLSEachEndpointIsVerifiedUnderItsOwnHost() async throws {
        let files = try await TestCertificates.shared()
        let harness = LinkHarness()
        let serverTLS = TLSConfiguration.server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
        let first = try harness.makeServer {
            $0.host = "127.0.0.2"; $0.tls = serverTLS
        }
        defer { first.stop() }
        let second = try harness.makeServer { $0.tls = serverTLS }
        defer { second.stop() }
        let client = harness.makeClient(port: first.port) {
            $0.endpoints = [Endpoint(host: "127.0.0.2", port: first.port), loopback(second.port)]
            var tls = TLSConfiguration.client(peerName: nil)
            tls.trustRoots = .files([files.caCertificate])
            tls.handshakeTimeout = 7  // settings of this test's own: a session store no other test shares
            $0.tls = tls
        }
        defer { client.disconnect() }
        client.connect()
        let mismatch = LongLinkClient<TextCodec>.DisconnectReason.network(.tls(.hostnameMismatch(expected: "127.0.0.2")))
        let events = try await harness.clientEvents.next(5)
        #expect(
            events == [
                "connected to 127.0.0.2:\(first.port)",
                "disconnected (\(mismatch))",
                "reconnect attempt 1 to 127.0.0.1:\(second.port) in 0 s",
                "connected to 127.0.0.1:\(second.port)",
                "secured with TLSv1.3"
            ])
        client.send("verified")
        #expect(try await harness.clientEvents.next() == "received echo: verified")
    }
}
