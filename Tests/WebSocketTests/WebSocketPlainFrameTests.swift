import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// A server's data frames written as header and payload with no frame `Data` (issue 33's echo path):
/// the same bytes as the encoder's, RFC 6455 §5.2.
@Suite(.offThePool) struct WebSocketPlainFrameTests {
    static func header(_ opcode: WebSocketOpcode, _ length: Int) -> [UInt8] {
        WebSocketFrameEncoder.withUnmaskedHeader(opcode: opcode, payloadLength: length) { Array($0) }
    }

    @Test func theHeaderOnTheStackIsTheEncodersForEveryLengthClass() throws {
        #expect(Self.header(.binary, 0) == [0x82, 0x00])
        #expect(Self.header(.text, 125) == [0x81, 0x7D])
        #expect(Self.header(.binary, 126) == [0x82, 0x7E, 0x00, 0x7E])
        #expect(Self.header(.binary, 65_535) == [0x82, 0x7E, 0xFF, 0xFF])
        #expect(Self.header(.binary, 65_536) == [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
        let encoder = WebSocketFrameEncoder(role: .server)
        for length in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
            let frame = try encoder.encode(WebSocketFrame(opcode: .binary, payload: Data(count: length)))
            let header = Self.header(.binary, length)
            #expect(Array(frame.prefix(header.count)) == header)
            #expect(frame.count == header.count + length)
        }
    }

    @Test func onlyAServerWithoutDeflateWritesPlainFramesAndNotOnceClosing() throws {
        var server = WebSocketProtocolHandler(role: .server, keepAlive: nil)
        let frame = try #require(try server.plainDataFrame(.text("hi")))
        #expect(frame.opcode == .text)
        #expect(frame.payload == Data("hi".utf8))
        #expect(try server.plainDataFrame(.ping(Data())) == nil)
        var client = WebSocketProtocolHandler(role: .client, keepAlive: nil)
        #expect(try client.plainDataFrame(.binary(Data([1]))) == nil)
        _ = server.close(code: .normalClosure)
        #expect(throws: WebSocketProtocolHandler.SendError.closing) { try server.plainDataFrame(.binary(Data([1]))) }
    }

    @Test func emptySmallAndLargePayloadsReachThePeerAsWholeFramesInOrder() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        let webSocket = WebSocket(
            upgraded: accepted, role: .server, handler: WebSocketProtocolHandler(role: .server, keepAlive: nil),
            delegate: RecordingWebSocketDelegate(), delegateQueue: nil)
        // Empty (header only), a copied payload, one over the copy limit (written as its Data).
        let payloads = [Data(), Data([1, 2, 3]), Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) })]
        for payload in payloads { webSocket.send(data: payload) }
        for payload in payloads {
            let header = Self.header(.binary, payload.count)
            #expect(try await WebSocketLoopbackTests.read(UInt(header.count + payload.count), from: pair) == header + Array(payload))
        }
    }
}
