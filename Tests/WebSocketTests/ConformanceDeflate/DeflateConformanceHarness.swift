import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

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
        let echo = EchoListenerDelegate()
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
        _ listener: WebSocketListener, echo: EchoListenerDelegate, offer: String,
        agreement: @escaping @Sendable (String) -> PerMessageDeflate.Agreement, corpus: DeflateCorpus, size: DeflateMessageSize, count: Int
    ) async throws -> String {
        let port = listener.port
        let (response, matched) = try await runOnAThread { () throws -> (String, Int) in
            let (peer, response) = try RawDeflateEndpoint.connect(port: port, offer: offer)
            let endpoint = RawDeflateEndpoint(peer: peer, agreement: agreement(response))
            return (response, try exchange(endpoint, corpus: corpus, size: size, count: count))
        }
        #expect(matched == count)
        #expect(try await echo.events.next(within: limit) == "accepted /deflate [\"\(response)\"]")
        #expect(try await echo.events.next(within: limit) == "closed 1000 (clean) after \(count) echoes")
        return response
    }

}
