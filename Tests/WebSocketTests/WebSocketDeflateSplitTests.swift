import Foundation
import SocketFraming
import Testing
import WebSocket

/// A compressed text message cut everywhere: fragments of one compressed byte each (so the inflated
/// text comes out in pieces that cut three-byte characters anywhere), each frame arriving one byte at
/// a time. UTF-8 is checked across the pieces (RFC 6455 §8.1, RFC 7692 §6.2).
@Suite struct WebSocketDeflateSplitTests {
    typealias Handler = WebSocketProtocolHandler

    /// `text` compressed, as fragments of one compressed byte each (RSV1 on the first only), masked.
    static func fragments(_ text: [UInt8]) throws -> [UInt8] {
        let payload = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true).compress(Data(text))
        var bytes: [UInt8] = []
        for (index, byte) in payload.enumerated() {
            let frame = WebSocketFrame(
                fin: index == payload.count - 1, reservedBits: index == 0 ? .rsv1 : [], opcode: index == 0 ? .text : .continuation,
                payload: Data([byte]))
            bytes += try WebSocketFrameEncoder(role: .client).encode(frame)
        }
        return bytes
    }

    static func feedByteByByte(_ handler: inout Handler, _ bytes: [UInt8]) -> [Handler.Output] {
        var buffer = FrameBuffer()
        var outputs: [Handler.Output] = []
        for byte in bytes {
            buffer.append(contentsOf: [byte])
            outputs += handler.receive(&buffer)
        }
        return outputs
    }

    @Test func aCompressedTextCutEverywhereIsDeliveredWhole() throws {
        var server = WebSocketDeflateHandlerTests.handler(.server, PerMessageDeflate.Agreement())
        let text = "€uro, grüße, 𝄞 " + String(repeating: "€", count: 300)
        #expect(Self.feedByteByByte(&server, try Self.fragments(Array(text.utf8))) == [.message(.text(text))])
    }

    @Test func aCompressedTextEndingInsideACharacterFailsWith1007() throws {
        var server = WebSocketDeflateHandlerTests.handler(.server, PerMessageDeflate.Agreement())
        let text = Array(String(repeating: "€", count: 50).utf8).dropLast()  // the last euro sign cut after 2 bytes
        let outputs = Self.feedByteByByte(&server, try Self.fragments(Array(text)))
        let results = outputs.compactMap { output -> WebSocketCloseResult? in
            if case .closed(let result) = output { return result }
            return nil
        }
        #expect(results.map(\.code) == [.invalidPayloadData])
        #expect(!outputs.contains { if case .message = $0 { return true } else { return false } })
    }
}
