import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// The side under test in a conformance case: echoes every message with its type (as Autobahn's tested
/// peers do), as our listener's app or as our client's delegate, and records the open, the extensions
/// agreed and, at the close, how it ended and how many messages it echoed.
final class DeflateConformanceEcho: WebSocketListenerDelegate, WebSocketDelegate {
    let events = EventRecorder<String>()
    private let state = LockedValue<(sockets: [WebSocket], echoes: [ObjectIdentifier: Int])>(([], [:]))

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        events.record("accepted \(webSocket.extensions.map(\.description))")
        state.withLock { $0.sockets.append(webSocket) }
        webSocket.delegate = self
    }

    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {
        events.record("open \(extensions.map(\.description))")
    }

    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
        events.record("failed \(error)")
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        default: return
        }
        state.withLock { $0.echoes[ObjectIdentifier(webSocket), default: 0] += 1 }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        let echoed = state.withLock { $0.echoes.removeValue(forKey: ObjectIdentifier(webSocket)) ?? 0 }
        events.record("closed \(result) after \(echoed) echoes")
    }
}

/// Runs one conformance case: the raw tester sends `count` messages of `size` from `corpus`, each after
/// the previous one's echo (Autobahn's `sendOne`/`onMessage`), checks every echo byte for byte and its
/// type, then closes with 1000 and expects 1000 back.
enum DeflateConformanceHarness {
    static let limit = TestTiming.hangLimit(.seconds(10))

    /// The tester's side, on a thread of its own; returns how many echoes matched.
    static func exchange(
        _ endpoint: RawDeflateEndpoint, corpus: DeflateCorpus, size: DeflateMessageSize, count: Int
    ) throws -> Int {
        var offset = 0
        let opcode: WebSocketOpcode = corpus.isBinary ? .binary : .text
        for index in 0..<count {
            let (payload, next) = corpus.message(length: size.length, from: offset)
            offset = next
            try endpoint.send(opcode, payload, fragmentSize: size.fragmentSize)
            let echo = try endpoint.receive()
            guard echo.opcode == opcode, echo.payload == payload else {
                throw RawPeerError("echo \(index) differs: \(echo.opcode) of \(echo.payload.count) bytes for \(opcode) of \(payload.count)")
            }
        }
        try endpoint.closeNormally()
        return count
    }

    /// Our client against a raw server that answers the offer with `response` and then tests it.
    /// Returns the offer our client sent.
    static func ourClient(
        _ configuration: PerMessageDeflate.ClientConfiguration, rawServerAnswers response: String,
        agreement: PerMessageDeflate.Agreement, corpus: DeflateCorpus, size: DeflateMessageSize, count: Int
    ) async throws -> String {
        let (listening, port) = try BlockingLoopbackSocket.listen()
        defer { listening.close() }
        async let tester = runOnAThread { () throws -> (String, Int) in
            let (peer, offer) = try RawDeflateEndpoint.accept(listening, response: response)
            let endpoint = RawDeflateEndpoint(peer: peer, agreement: agreement)
            return (offer, try exchange(endpoint, corpus: corpus, size: size, count: count))
        }
        let echo = DeflateConformanceEcho()
        var clientConfiguration = WebSocket.ClientConfiguration()
        clientConfiguration.deflate = configuration
        let client = WebSocket(client: clientConfiguration, delegate: echo, delegateQueue: DispatchQueue(label: "conformance client"))
        try client.connect(to: "ws://127.0.0.1:\(port)/")
        let (offer, matched) = try await tester
        #expect(matched == count)
        #expect(try await echo.events.next(within: limit) == "open [\"\(response)\"]")
        #expect(try await echo.events.next(within: limit) == "closed 1000 (clean) after \(count) echoes")
        return offer
    }

    /// A raw client offering `offer` to `listener` (whose app is `echo`) and then testing it. Returns
    /// the listener's answer.
    static func ourServer(
        _ listener: WebSocketListener, echo: DeflateConformanceEcho, offer: String,
        agreement: @escaping @Sendable (String) -> PerMessageDeflate.Agreement, corpus: DeflateCorpus, size: DeflateMessageSize, count: Int
    ) async throws -> String {
        let port = listener.port
        let (response, matched) = try await runOnAThread { () throws -> (String, Int) in
            let (peer, response) = try RawDeflateEndpoint.connect(port: port, offer: offer)
            let endpoint = RawDeflateEndpoint(peer: peer, agreement: agreement(response))
            return (response, try exchange(endpoint, corpus: corpus, size: size, count: count))
        }
        #expect(matched == count)
        #expect(try await echo.events.next(within: limit) == "accepted [\"\(response)\"]")
        #expect(try await echo.events.next(within: limit) == "closed 1000 (clean) after \(count) echoes")
        return response
    }

    /// A listener on 127.0.0.1 with `deflate`, its app `echo`.
    static func listener(_ deflate: PerMessageDeflate.ServerConfiguration, echo: DeflateConformanceEcho) throws -> WebSocketListener {
        var configuration = WebSocketListener.Configuration(port: 0)
        configuration.deflate = deflate
        let listener = WebSocketListener(configuration: configuration, delegate: echo, delegateQueue: DispatchQueue(label: "conformance"))
        try listener.start()
        return listener
    }
}
