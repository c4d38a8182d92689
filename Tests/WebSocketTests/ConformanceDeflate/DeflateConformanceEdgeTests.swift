import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// What groups 12 and 13 leave out, against our listener with context takeover both ways (a raw client
/// offering plain `permessage-deflate`): empty messages (RFC 7692 §7.2.3.6), a compressed message cut
/// into 1-byte frames and one whose first frame is empty, a ping between the frames of a compressed
/// message (RFC 6455 §5.4), and an uncompressed message on a compressed connection (§6.1: RSV1 clear).
@Suite(.offThePool) struct DeflateConformanceEdgeTests {
    @Test func emptyMessagesTinyFramesAPingInsideAndAnUncompressedMessage() async throws {
        let echo = EchoListenerDelegate()
        let server = PerMessageDeflate.ServerConfiguration(serverNoContextTakeover: false)
        let listener = try echo.start { $0.deflate = server }
        defer { listener.stop() }
        let port = listener.port
        let log = try await runOnAThread { () throws -> [String] in
            let (peer, response) = try RawDeflateEndpoint.connect(port: port, offer: "permessage-deflate")
            var log = [response]
            let endpoint = RawDeflateEndpoint(peer: peer, agreement: PerMessageDeflate.Agreement())
            let text = Data("grüße ✓ permessage-deflate grüße ✓".utf8)
            func echoOf(_ send: () throws -> Void) throws -> String {
                try send()
                let echo = try endpoint.receive()
                return "\(echo.opcode) \(echo.payload == text ? "same" : "\(echo.payload.count) bytes")"
            }
            for opcode in [WebSocketOpcode.text, .binary, .text] {
                log.append(try echoOf { try endpoint.send(opcode, Data(), fragmentSize: 0) })
            }
            log.append(try echoOf { try endpoint.send(.text, text, fragmentSize: 1) })
            // Compressed afresh (valid under context takeover too), sent by hand: an empty first frame
            // with RSV1, 3 bytes, a ping, the rest.
            let compressed = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true).compress(text)
            try peer.send([
                WebSocketFrame(fin: false, reservedBits: .rsv1, opcode: .text, payload: Data()),
                WebSocketFrame(fin: false, opcode: .continuation, payload: compressed.prefix(3)),
                WebSocketFrame(opcode: .ping, payload: Data("p".utf8)),
                WebSocketFrame(opcode: .continuation, payload: compressed.dropFirst(3))
            ])
            let pong = try endpoint.nextFrame()
            log.append("\(pong.opcode) \(String(decoding: pong.payload, as: UTF8.self))")
            log.append(try echoOf {})
            log.append(try echoOf { try peer.send([WebSocketFrame(opcode: .binary, payload: text)]) })
            try endpoint.closeNormally()
            return log
        }
        #expect(
            log == [
                "permessage-deflate", "text 0 bytes", "binary 0 bytes", "text 0 bytes", "text same", "pong p", "text same", "binary same"
            ])
        #expect(try await echo.events.next(within: DeflateConformanceHarness.limit) == "accepted /deflate [\"permessage-deflate\"]")
        #expect(try await echo.events.next(within: DeflateConformanceHarness.limit) == "closed 1000 (clean) after 6 echoes")
    }
}
