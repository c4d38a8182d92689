import AsyncSocket
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// An echo server on the async listener: each connection in a task of its own echoes every message
/// (text as text, binary as binary) until the client sends `close me`, which it answers by closing
/// with 4001 "asked"; how each connection ended is recorded as `TARGET RESULT`.
struct AsyncEchoServer {
    let listener: WebSocketConnectionListener
    let ends = EventRecorder<String>()
    /// The iteration; returns how many connections it took.
    let iteration: Task<Int, Never>

    init(options: WebSocketConnectionListener.Options = .init()) async throws {
        let listener = try await WebSocketConnectionListener.bind(configuration: .init(port: 0), options: options)
        let ends = ends
        self.listener = listener
        iteration = Task {
            var served = 0
            for await connection in listener {
                served += 1
                Task { await Self.echo(connection, ends) }
            }
            return served
        }
    }

    static func echo(_ connection: WebSocketConnection, _ ends: EventRecorder<String>) async {
        for await message in connection.messages {
            if message == .text("close me") {
                await connection.close(code: WebSocketCloseCode(rawValue: 4001), reason: "asked")
                break
            }
            do { try await connection.send(message) } catch { break }
        }
        ends.record("\(connection.request?.target ?? "-") \(await connection.closeResult)")
    }

    var url: String { "ws://127.0.0.1:\(listener.port)" }
}

/// The async server (``WebSocketConnectionListener``) with the async client (``WebSocketConnection``).
@Suite(.offThePool) struct WebSocketConnectionListenerTests {
    @Test func anAsyncEchoServerEchoesInOrderAndBothSidesCloseWithTheirCodes() async throws {
        let server = try await AsyncEchoServer()
        let client = try await WebSocketConnection.connect(to: "\(server.url)/echo")
        var messages = client.messages.makeAsyncIterator()
        try await client.send(.text("héllo ✓"))
        #expect(await messages.next() == .text("héllo ✓"))
        try await client.send(.binary(Data([0, 1, 2, 0xFF])))
        #expect(await messages.next() == .binary(Data([0, 1, 2, 0xFF])))
        let thousand = (0..<1_000).map { $0.isMultiple(of: 2) ? WebSocketMessage.text("m\($0)") : .binary(Data("m\($0)".utf8)) }
        for message in thousand { try await client.send(message) }
        var echoed: [WebSocketMessage] = []
        for _ in thousand {
            guard let message = await messages.next() else { break }
            echoed.append(message)
        }
        #expect(echoed == thousand)
        // The client closes: the server echoes the code (RFC 6455 §5.5.1) and closes TCP.
        let result = await client.close(code: WebSocketCloseCode(rawValue: 4000), reason: "bye")
        #expect(result == WebSocketCloseResult(code: WebSocketCloseCode(rawValue: 4000), reason: "", wasClean: true))
        #expect(await messages.next() == nil)
        #expect(try await server.ends.next() == "/echo 4000 \"bye\" (clean)")
        // The server closes: the client gets its code and reason.
        // (A Foundation URL this time, as issue 33 names the parameter.)
        let second = try await WebSocketConnection.connect(to: try #require(URL(string: "\(server.url)/second")))
        try await second.send(.text("close me"))
        #expect(await second.closeResult == WebSocketCloseResult(code: WebSocketCloseCode(rawValue: 4001), reason: "asked", wasClean: true))
        #expect(try await server.ends.next() == "/second 4001 (clean)")
        await server.listener.close()
        #expect(await server.iteration.value == 2)
    }

    @Test func aRefusedOriginIsA403TheClientSeesAsATypedHandshakeError() async throws {
        var options = WebSocketConnectionListener.Options()
        options.shouldAccept = { request in
            request.origin == "https://chat.example"
                ? .accept(subprotocol: "chat.v2") : .refuse(statusCode: 403, text: "origin not allowed")
        }
        let server = try await AsyncEchoServer(options: options)
        var configuration = WebSocket.ClientConfiguration()
        configuration.subprotocols = ["chat.v1", "chat.v2"]
        configuration.headers = [("Origin", "https://evil.example")]
        await #expect(throws: WebSocketConnectError.handshake(.unexpectedStatus(403))) {
            _ = try await WebSocketConnection.connect(to: "\(server.url)/", configuration: configuration)
        }
        configuration.headers = [("Origin", "https://chat.example")]
        let client = try await WebSocketConnection.connect(to: "\(server.url)/", configuration: configuration)
        #expect(client.subprotocol == "chat.v2")
        try await client.send(.text("in"))
        #expect(await Self.nextMessage(client) == .text("in"))
        await client.close()
        await server.listener.close()
        #expect(await server.iteration.value == 1)
    }

    /// With room for one waiting connection and no iteration, a second upgrade is refused with 503
    /// before the switch; once the first is taken there is room again; closing the listener closes
    /// the one still waiting with 1001.
    @Test func pastTheBoundOfWaitingConnectionsUpgradesAreRefusedWith503() async throws {
        var options = WebSocketConnectionListener.Options(maxPendingConnections: 1)
        options.shouldAccept = { .accept(subprotocol: $0.subprotocols.first) }
        let listener = try await WebSocketConnectionListener.bind(configuration: .init(port: 0), options: options)
        let url = "ws://127.0.0.1:\(listener.port)"
        var configuration = WebSocket.ClientConfiguration()
        configuration.subprotocols = ["a"]
        let first = try await WebSocketConnection.connect(to: "\(url)/first", configuration: configuration)
        try await waitUntil("the first waits in the listener") { listener.pendingConnections == 1 }
        await #expect(throws: WebSocketConnectError.handshake(.unexpectedStatus(503))) {
            _ = try await WebSocketConnection.connect(to: "\(url)/second")
        }
        var iterator = listener.makeAsyncIterator()
        let accepted = try #require(await iterator.next())
        #expect(accepted.request?.target == "/first")
        #expect(accepted.subprotocol == "a" && first.subprotocol == "a")
        let third = try await WebSocketConnection.connect(to: "\(url)/third")
        try await first.send(.text("to the server"))
        #expect(await Self.nextMessage(accepted) == .text("to the server"))
        try await waitUntil("the third waits in the listener") { listener.pendingConnections == 1 }
        await listener.close()
        #expect(await iterator.next() == nil)
        #expect(await third.closeResult == WebSocketCloseResult(code: .goingAway, reason: "the server stopped accepting", wasClean: true))
        // The connection handed out goes on.
        try await accepted.send(.text("still here"))
        #expect(await Self.nextMessage(first) == .text("still here"))
        await first.close()
    }

    @Test func requestsThatAreNotUpgradesGet426OrTheHandlersAnswer() async throws {
        let plain = try await AsyncEchoServer()
        let upgradeRequired = HTTPResponse.plainText(
            statusCode: 426, text: "this port speaks WebSocket", extraHeaders: [("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13")])
        #expect(
            try await Self.answer(to: "GET /page HTTP/1.1\r\nHost: x\r\n\r\n", port: plain.listener.port) == Data(upgradeRequired.bytes))
        var options = WebSocketConnectionListener.Options()
        options.httpRequestHandler = { request in .plainText(statusCode: 200, text: "the page at \(request.target)") }
        let serving = try await AsyncEchoServer(options: options)
        #expect(
            try await Self.answer(to: "GET /page HTTP/1.1\r\nHost: x\r\n\r\n", port: serving.listener.port)
                == Data(HTTPResponse.plainText(statusCode: 200, text: "the page at /page").bytes))
        // The same port still upgrades.
        let client = try await WebSocketConnection.connect(to: "\(serving.url)/socket")
        await client.close()
        await plain.listener.close()
        await serving.listener.close()
    }

    /// `connection`'s next message.
    static func nextMessage(_ connection: WebSocketConnection) async -> WebSocketMessage? {
        var messages = connection.messages.makeAsyncIterator()
        return await messages.next()
    }

    /// Everything a plain TCP client gets for `request` until the server closes the connection.
    static func answer(to request: String, port: UInt16) async throws -> Data {
        let connection = try await TCPConnection.connect(toHost: "127.0.0.1", port: port, timeout: .seconds(5))
        try await connection.write(Data(request.utf8))
        var answer = Data()
        while answer.count < 10_000 {
            do { answer += try await connection.read(timeout: TestTiming.hangLimit(.seconds(10))) } catch SocketError.closedByPeer { break }
        }
        await connection.close()
        return answer
    }

    /// Cancelling the iterating task ends its iteration only; closing the listener refuses new
    /// connects. Connections handed out go on working throughout.
    @Test func endingTheIterationAndClosingTheListenerLeaveOpenConnectionsWorking() async throws {
        let server = try await AsyncEchoServer()
        let client = try await WebSocketConnection.connect(to: "\(server.url)/open")
        var messages = client.messages.makeAsyncIterator()
        try await client.send(.text("one"))
        #expect(await messages.next() == .text("one"))
        server.iteration.cancel()
        #expect(await server.iteration.value == 1)
        try await client.send(.text("two"))
        #expect(await messages.next() == .text("two"))
        // Still listening (the test holds it): an upgrade waits for an iteration.
        let waiting = try await WebSocketConnection.connect(to: "\(server.url)/waiting")
        await server.listener.close()
        await #expect(throws: WebSocketConnectError.socket(.connectionRefused(operation: "connect", errno: ECONNREFUSED))) {
            _ = try await WebSocketConnection.connect(to: "\(server.url)/late")
        }
        #expect(await waiting.closeResult == WebSocketCloseResult(code: .goingAway, reason: "the server stopped accepting", wasClean: true))
        try await client.send(.binary(Data([3])))
        #expect(await messages.next() == .binary(Data([3])))
        #expect(await client.close() == WebSocketCloseResult(code: .normalClosure, reason: "", wasClean: true))
        #expect(try await server.ends.next() == "/open 1000 (clean)")
    }
}
