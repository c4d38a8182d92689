import AsyncSocket
import Dispatch
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// LongLink carried by WebSocket upgrades (each LongLink frame one binary message), on the harness's
/// manual clock: the same heartbeats, reconnects and reliable delivery as over TCP.
@Suite struct LongLinkWebSocketTests {
    /// A server taking upgrades at `/link` on a second port (`webSocketPort`, 0: a free one).
    private static func makeServer(_ harness: LinkHarness, webSocketPort: UInt16 = 0) throws -> LongLinkServer<TextCodec> {
        try harness.makeServer { $0.webSocket = .init(port: webSocketPort, path: "/link") }
    }

    /// A client of the server's WebSocket port.
    private static func makeClient(
        _ harness: LinkHarness, port: UInt16, configure: (inout LongLinkClient<TextCodec>.Configuration) -> Void = { _ in }
    ) throws -> LongLinkClient<TextCodec> {
        let endpoint = try Endpoint(webSocket: "ws://127.0.0.1:\(port)/link")
        return harness.makeClient(port: 0) { configuration in
            configuration.endpoints = [endpoint]
            configure(&configuration)
        }
    }

    @Test func endpointFromAWebSocketURL() throws {
        let endpoint = try Endpoint(webSocket: "wss://[::1]:8443/link?v=2")
        #expect(endpoint.host == "::1")
        #expect(endpoint.port == 8443)
        #expect(endpoint.webSocketURL?.isSecure == true)
        #expect(endpoint.webSocketURL?.resourceName == "/link?v=2")
        #expect(endpoint.description == "wss://[::1]:8443/link?v=2")
        #expect(try Endpoint(webSocket: "ws://chat.example/").port == 80)
        #expect(throws: WebSocketURL.ParseError.unsupportedScheme) { try Endpoint(webSocket: "http://chat.example/") }
        #expect(Endpoint(host: "::1", port: 7).description == "[::1]:7")
    }

    @Test func clientAndServerExchangeFramesOverWebSocket() async throws {
        let harness = LinkHarness()
        let server = try Self.makeServer(harness)
        defer { server.stop() }
        #expect(server.webSocketPort != 0)
        #expect(server.webSocketPort != server.port)
        let client = try Self.makeClient(harness, port: server.webSocketPort)
        defer { client.disconnect() }
        client.greeting = "hello"
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.webSocketPort)")
        #expect(try await harness.serverEvents.next(2) == ["opened", "received hello"])
        #expect(try await harness.clientEvents.next() == "received echo: hello")
        for text in ["one", "two", String(repeating: "x", count: 40_000)] { client.send(text) }
        #expect(
            try await harness.clientEvents.next(3) == [
                "received echo: one", "received echo: two", "received echo: \(String(repeating: "x", count: 40_000))"
            ])
        server.broadcast("to everyone")
        #expect(try await harness.clientEvents.next() == "received to everyone")
        #expect(try await harness.serverEvents.next(3).count == 3)
    }

    @Test func eachFrameIsOneBinaryMessageAndHeartbeatsAreAnsweredUnseen() async throws {
        let harness = LinkHarness()
        let server = try Self.makeServer(harness)
        defer { server.stop() }
        let peer = WebSocketPeer()
        let webSocket = try peer.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/link")
        defer { webSocket.close() }
        #expect(try await peer.events.next() == "open")
        webSocket.send(data: TextCodec.frame("hi"))
        #expect(try await peer.events.next() == "binary frame(echo: hi)")
        webSocket.send(data: TextCodec.frame("PING"))
        #expect(try await peer.events.next() == "binary frame(PONG)")
        await harness.drainEventQueues()
        #expect(harness.serverEvents.all == ["opened", "received hi"])
    }

    @Test func clientHeartbeatsAreAnsweredAndTheLinkStaysUp() async throws {
        let harness = LinkHarness()
        let server = try Self.makeServer(harness)
        defer { server.stop() }
        let client = try Self.makeClient(harness, port: server.webSocketPort) { $0.heartbeatInterval = .seconds(10) }
        defer { client.disconnect() }
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.webSocketPort)")
        for round in 0..<5 {
            await harness.advance(by: .seconds(10))  // a heartbeat; its answer comes back in real time
            client.send("tick \(round)")  // the echo follows the answer on the same connection
            #expect(try await harness.clientEvents.next() == "received echo: tick \(round)")
        }
        await harness.advance(by: .seconds(9))  // the last heartbeat's acknowledgement timeout would be due now
        await harness.drainEventQueues()
        #expect(harness.clientEvents.pending == [])
        // Five heartbeats crossed; none reached the app.
        #expect(harness.serverEvents.all == ["opened"] + (0..<5).map { "received tick \($0)" })
    }

    @Test func serverRestartedUnderAConnectedClientIsReconnectedTo() async throws {
        let harness = LinkHarness()
        // A port below the ephemeral range, so no connection's local port takes it while the server is down.
        let port = unusedLoopbackPort()
        let first = try Self.makeServer(harness, webSocketPort: port)
        let client = try Self.makeClient(harness, port: port)
        defer { client.disconnect() }
        client.greeting = "hello again"
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(port)")
        #expect(try await harness.serverEvents.next(2) == ["opened", "received hello again"])
        #expect(try await harness.clientEvents.next() == "received echo: hello again")
        first.stop()
        let afterStop = try await harness.clientEvents.next(4)
        #expect(
            afterStop == [
                "disconnected (by server)",
                "reconnect attempt 1 in 0 s",
                "connect failed: connect: Connection refused (errno 111)",
                "reconnect attempt 2 in 2 s"
            ])
        #expect(try await harness.serverEvents.next() == "closed (closed by server)")
        let second = try Self.makeServer(harness, webSocketPort: port)
        defer { second.stop() }
        await harness.advance(by: .seconds(2))
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(port)")
        client.send("after restart")
        #expect(try await harness.clientEvents.next(2) == ["received echo: hello again", "received echo: after restart"])
    }

    @Test func textMessageClosesOnlyThatConnectionWithATypedError() async throws {
        let harness = LinkHarness()
        let server = try Self.makeServer(harness)
        defer { server.stop() }
        let good = try Self.makeClient(harness, port: server.webSocketPort)
        defer { good.disconnect() }
        good.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.webSocketPort)")
        #expect(try await harness.serverEvents.next() == "opened")
        let peer = WebSocketPeer()
        let webSocket = try peer.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/link")
        #expect(try await peer.events.next() == "open")
        #expect(try await harness.serverEvents.next() == "opened")
        webSocket.send(text: "hi")
        let why = "\(WebSocketLinkError.textMessage)"
        #expect(why == "a text message (LongLink frames are binary messages)")
        #expect(try await harness.serverEvents.next() == "closed (protocol error: \(why))")
        #expect(
            try await peer.events.next(2) == [
                "binary frame(BYE: protocol error: \(why))", "closed 1003 \"\(why)\" (clean)"
            ])
        // The other connection goes on.
        good.send("still here")
        #expect(try await harness.clientEvents.next() == "received echo: still here")
        #expect(server.sessions.count == 1)
    }

    @Test func messageThatIsNotExactlyOneFrameClosesOnlyThatConnection() async throws {
        let harness = LinkHarness()
        let server = try Self.makeServer(harness)
        defer { server.stop() }
        let cases: [(Data, WebSocketLinkError)] = [
            (TextCodec.frame("a") + TextCodec.frame("b"), .notOneFrame(messageBytes: 10, frameBytes: 5)),
            (TextCodec.frame("abc").prefix(5), .notOneFrame(messageBytes: 5, frameBytes: nil)),
            (Data([0xFF, 0xFF, 0xFF, 0xFF]), .invalidFrame(.frameTooLong(length: 4_294_967_299, maxFrameLength: 65_536)))
        ]
        for (bytes, error) in cases {
            let peer = WebSocketPeer()
            let webSocket = try peer.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/link")
            #expect(try await peer.events.next() == "open")
            webSocket.send(data: TextCodec.frame("fine"))
            #expect(try await peer.events.next() == "binary frame(echo: fine)")
            webSocket.send(data: bytes)
            let why = "\(error)"
            let peerSaw = try await peer.events.next(2)
            #expect(peerSaw == ["binary frame(BYE: protocol error: \(why))", "closed 1008 \"\(why)\" (clean)"])
            let serverSaw = try await harness.serverEvents.next(3)
            #expect(serverSaw == ["opened", "received fine", "closed (protocol error: \(why))"])
        }
        #expect(server.sessions.isEmpty)
    }

    @Test func upgradeToAnotherPathIsAnsweredNotFound() async throws {
        let harness = LinkHarness()
        let server = try Self.makeServer(harness)
        defer { server.stop() }
        let peer = WebSocketPeer()
        let webSocket = try peer.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/elsewhere")
        defer { withExtendedLifetime(webSocket) {} }
        #expect(try await peer.events.next() == "failed \(WebSocketConnectError.handshake(.unexpectedStatus(404)))")
        await harness.drainEventQueues()
        #expect(harness.serverEvents.all == [])
    }
}

/// The client's side of the typed errors: a WebSocket server that breaks the one-frame-per-binary-message rule.
@Suite struct LongLinkWebSocketClientErrorTests {
    /// A WebSocket listener that sends `message` to each client once it has received one message.
    private final class Misbehaving: WebSocketListenerDelegate, WebSocketDelegate, Sendable {
        let message: WebSocketMessage
        let accepted = LockedValue<[WebSocket]>([])
        init(_ message: WebSocketMessage) { self.message = message }

        func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
            webSocket.delegate = self
            accepted.withLock { $0.append(webSocket) }
        }

        func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
            switch self.message {
            case .text(let text): webSocket.send(text: text)
            case .binary(let data): webSocket.send(data: data)
            default: break
            }
        }
    }

    @Test(arguments: [
        (WebSocketMessage.text("hi"), WebSocketLinkError.textMessage),
        (.binary(TextCodec.frame("a") + Data([0])), .notOneFrame(messageBytes: 6, frameBytes: 5))
    ])
    func serverBreakingTheRuleEndsTheLinkWithAProtocolError(message: WebSocketMessage, error: WebSocketLinkError) async throws {
        let harness = LinkHarness()
        let misbehaving = Misbehaving(message)
        let listener = WebSocketListener(
            configuration: .init(port: 0), delegate: misbehaving, delegateQueue: DispatchQueue(label: "misbehaving"))
        try listener.start()
        defer { listener.stop() }
        let endpoint = try Endpoint(webSocket: "ws://127.0.0.1:\(listener.port)/")
        let client = harness.makeClient(port: 0) { $0.endpoints = [endpoint] }
        defer { client.disconnect() }
        client.greeting = "hello"
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(listener.port)")
        #expect(try await harness.clientEvents.next() == "disconnected (protocol error: \(error))")
    }
}
