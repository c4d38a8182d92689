import Dispatch
import Foundation
import SocketFraming
import Synchronization
import Testing
import TestSupport
import WebSocket

/// The DocC catalog's "A server, delegate style", as written there but on port 0 and a queue of its
/// own instead of `.main` (a test cannot call `dispatchMain()`); its allowed origin is on that port.
private final class DocEchoServer: WebSocketListenerDelegate, WebSocketDelegate {
    private let open = Mutex<[ObjectIdentifier: WebSocket]>([:])
    let allowedOrigin = Mutex<String?>(nil)
    let closed = EventRecorder<String>()

    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        let allowed = allowedOrigin.withLock { $0 }
        return request.origin == nil || request.origin == allowed ? .accept() : .refuse(statusCode: 403, text: "origin not allowed")
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        open.withLock { $0[ObjectIdentifier(webSocket)] = webSocket }
        webSocket.delegate = self  // reading starts once this returns
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        default: break  // pings are answered by the connection itself
        }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(webSocket)) }
        closed.record("\(result)")
    }
}

/// A newcomer's try of README.md's and the DocC catalog's examples: the delegate echo server with the
/// async client, and the async server and client as the catalog writes them, each run and checked
/// against what the comments in the examples say.
@Suite(.offThePool) struct WebSocketDocExamplesTests {
    @Test func theDelegateEchoServerEchoesTheAsyncClientAndRefusesAForeignOrigin() async throws {
        let echo = DocEchoServer()
        let listener = WebSocketListener(
            configuration: .init(host: "127.0.0.1", port: 0), delegate: echo, delegateQueue: DispatchQueue(label: "echo"))
        try listener.start()
        defer { listener.stop() }
        echo.allowedOrigin.withLock { $0 = "http://127.0.0.1:\(listener.port)" }

        let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/chat")
        try await connection.send(.text("hello"))
        try await connection.send(.binary(Data([0, 1, 2])))
        var messages: [WebSocketMessage] = []
        for await message in connection.messages {
            messages.append(message)
            if messages.count == 2 { break }
        }
        #expect(messages == [.text("hello"), .binary(Data([0, 1, 2]))])
        #expect("\(messages[0])" == "text(\"hello\")")
        #expect("\(await connection.close())" == "1000 (clean)")
        #expect(try await echo.closed.next(within: TestTiming.hangLimit(.seconds(10))) == "1000 (clean)")

        var foreign = WebSocket.ClientConfiguration()
        foreign.headers = [("Origin", "https://elsewhere.example")]
        await #expect(throws: WebSocketConnectError.self) {
            _ = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/chat", configuration: foreign)
        }
    }

    @Test func theAsyncServerAndClientOfTheCatalogDoWhatTheirCommentsSay() async throws {
        var options = WebSocketConnectionListener.Options()
        options.shouldAccept = { request in
            request.origin == "https://chat.example" ? .accept() : .refuse(statusCode: 403, text: "origin not allowed")
        }
        let listener = try await WebSocketConnectionListener.bind(configuration: .init(port: 0), options: options)
        let server = Task {
            for await connection in listener {
                Task {
                    for await message in connection.messages { try await connection.send(message) }
                }
            }
        }
        var configuration = WebSocket.ClientConfiguration()
        configuration.headers = [("Origin", "https://chat.example")]
        let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/chat", configuration: configuration)
        try await connection.send(.text("hello"))
        var received: WebSocketMessage?
        for await message in connection.messages {
            received = message
            break
        }
        #expect(received.map { "\($0)" } == "text(\"hello\")")
        #expect("\(await connection.close())" == "1000 (clean)")
        await listener.close()
        server.cancel()
        // "connects are refused from now on"
        await #expect(throws: WebSocketConnectError.self) {
            _ = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/chat", configuration: configuration)
        }
    }
}
