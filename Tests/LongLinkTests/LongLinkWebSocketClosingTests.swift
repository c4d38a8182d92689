import AsyncSocket
import Dispatch
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// Ending a LongLink session carried by a WebSocket: the link's farewells, then the closing handshake
/// (RFC 6455 §7) with the close code each ending calls for; and `wss://`.
@Suite struct LongLinkWebSocketClosingTests {
    @Test func shutDownSendsTheFarewellThenGoingAway() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.webSocket = .init(port: 0) }
        let peer = WebSocketPeer()
        let webSocket = try peer.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/")
        defer { withExtendedLifetime(webSocket) {} }
        #expect(try await peer.events.next() == "open")
        #expect(try await harness.serverEvents.next() == "opened")
        let told = EventRecorder<Int>()
        server.broadcast("last words")
        server.shutDown { told.record($0) }
        let saw = try await peer.events.next(3)
        #expect(saw == ["binary frame(last words)", "binary frame(BYE: server shutting down)", "closed 1001 (clean)"])
        #expect(try await told.next() == 1)
        #expect(try await harness.serverEvents.next() == "closed (server shutting down)")
    }

    @Test func serverFullSendsTheFarewellThenTryAgainLater() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer {
            $0.webSocket = .init(port: 0)
            $0.maxConnections = 1
        }
        defer { server.stop() }
        let first = WebSocketPeer()
        let admitted = try first.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/")
        defer { admitted.close() }
        #expect(try await first.events.next() == "open")
        #expect(try await harness.serverEvents.next() == "opened")
        let second = WebSocketPeer()
        let refused = try second.connect(to: "ws://127.0.0.1:\(server.webSocketPort)/")
        defer { withExtendedLifetime(refused) {} }
        let saw = try await second.events.next(3)
        #expect(saw == ["open", "binary frame(BYE: server full (1 connections))", "closed 1013 (clean)"])
        #expect(try await harness.serverEvents.next() == "refused (server full (1 connections))")
        #expect(server.sessions.count == 1)
    }

    @Test func disconnectAfterSendingClosesCleanlyByTheClient() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.webSocket = .init(port: 0) }
        defer { server.stop() }
        let endpoint = try Endpoint(webSocket: "ws://127.0.0.1:\(server.webSocketPort)/")
        let client = harness.makeClient(port: 0) { $0.endpoints = [endpoint] }
        client.connect()
        #expect(try await harness.clientEvents.next() == "connected to 127.0.0.1:\(server.webSocketPort)")
        client.send("goodbye")
        client.disconnectAfterSending()
        #expect(try await harness.clientEvents.next(2) == ["received echo: goodbye", "disconnected (by user)"])
        #expect(try await harness.serverEvents.next(3) == ["opened", "received goodbye", "closed (closed by client)"])
    }

    @Test func secureWebSocketHandshakesTLSBeforeTheUpgrade() async throws {
        let files = try await TestCertificates.shared()
        let harness = LinkHarness()
        let server = try harness.makeServer {
            $0.tls = TLSConfiguration.server(certificateChain: .file(files.serverCertificate), privateKey: .file(files.serverKey))
            $0.webSocket = .init(port: 0, path: "/link")
        }
        defer { server.stop() }
        let port = server.webSocketPort
        let endpoint = try Endpoint(webSocket: "wss://127.0.0.1:\(port)/link")
        let client = harness.makeClient(port: 0) {
            $0.endpoints = [endpoint]
            var tls = TLSConfiguration.client(peerName: "localhost")
            tls.trustRoots = .files([files.caCertificate])
            $0.tls = tls
        }
        defer { client.disconnect() }
        client.connect()
        #expect(try await harness.clientEvents.next(2) == ["connected to 127.0.0.1:\(port)", "secured with TLSv1.3"])
        client.send("hello")
        #expect(try await harness.clientEvents.next() == "received echo: hello")
    }
}

/// A peer that breaks RFC 6455 itself (an unmasked client frame, §5.1): the WebSocket layer fails that
/// connection with 1002, and the session ends as a protocol error.
@Suite struct LongLinkWebSocketViolationTests {
    @Test func unmaskedClientFrameEndsTheSessionAsAProtocolError() async throws {
        let harness = LinkHarness()
        let server = try harness.makeServer { $0.webSocket = .init(port: 0) }
        defer { server.stop() }
        let peer = RecordingDelegate()
        let socket = TCPSocket(delegate: peer, delegateQueue: DispatchQueue(label: "raw"))
        defer { socket.disconnect() }
        try socket.connect(toHost: "127.0.0.1", onPort: server.webSocketPort, withTimeout: 5)
        let request =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        socket.write(Data(request.utf8), withTimeout: -1, tag: 0)
        #expect(try await harness.serverEvents.next() == "opened")
        socket.write(Data([0x82, 0x05]) + TextCodec.frame("a"), withTimeout: -1, tag: 1)
        let result = WebSocketCloseResult(code: .protocolError, reason: "\(WebSocketProtocolError.unmaskedFrame)", wasClean: false)
        let why = "\(WebSocketLinkError.webSocket(result))"
        #expect(try await harness.serverEvents.next() == "closed (protocol error: \(why))")
        #expect(server.sessions.isEmpty)
    }
}
