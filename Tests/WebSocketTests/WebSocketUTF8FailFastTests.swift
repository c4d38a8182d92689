import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// UTF-8 checked as it arrives (RFC 6455 §8.1; Autobahn case group 6.4): an invalid byte fails the
/// connection with 1007 as soon as it has been received, even inside a frame whose rest never comes.
@Suite struct WebSocketUTF8FailFastTests {
    typealias Handler = WebSocketProtocolHandler

    /// A client frame masked with 37 fa 21 3d (RFC 6455 §5.7's key), announcing `length` payload bytes of
    /// which only `payload` follow.
    static func maskedFrame(_ first: UInt8, length: Int, _ payload: [UInt8]) -> [UInt8] {
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let lengthBytes: [UInt8] = length <= 125 ? [0x80 | UInt8(length)] : [0x80 | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        return [first] + lengthBytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    static func receive(_ handler: inout Handler, _ buffer: inout FrameBuffer, adding bytes: [UInt8]) -> [Handler.Output] {
        buffer.append(contentsOf: bytes)
        return handler.receive(&buffer)
    }

    @Test func aTextFrameWhoseFirstBytesAreInvalidFailsWith1007ThoughItsRestNeverArrives() {
        var handler = Handler(role: .server, keepAlive: nil)
        var buffer = FrameBuffer()
        // A 100-byte text frame of which 2 bytes arrive: "h", then C0 (overlong, never UTF-8).
        let outputs = Self.receive(&handler, &buffer, adding: Self.maskedFrame(0x81, length: 100, [0x68, 0xC0]))
        #expect(outputs == WebSocketDeflateHandlerTests.failure(1007, .invalidUTF8(offset: 1)))
        #expect(handler.isClosed)
    }

    @Test func validBytesOfAPartialFrameWaitAndTheFirstInvalidOneFailsWhenItArrives() {
        var handler = Handler(role: .server, keepAlive: nil)
        var buffer = FrameBuffer()
        let payload: [UInt8] = [0x48, 0xC3, 0xA9, 0x78, 0xFF, 0x79]  // "Héx", FF, "y"
        let frame = Self.maskedFrame(0x81, length: 300, payload)
        // "H" and half of "é" (a sequence cut between reads): nothing yet.
        #expect(Self.receive(&handler, &buffer, adding: Array(frame[0..<8])) == [])
        #expect(Self.receive(&handler, &buffer, adding: Array(frame[8..<10])) == [])
        // FF arrives: 1007 at its offset in the message, the frame still 294 bytes short.
        #expect(
            Self.receive(&handler, &buffer, adding: Array(frame[10...]))
                == WebSocketDeflateHandlerTests.failure(1007, .invalidUTF8(offset: 4)))
    }

    @Test func anInvalidByteInAPartialContinuationCountsFromTheMessagesStart() {
        var handler = Handler(role: .server, keepAlive: nil)
        var buffer = FrameBuffer()
        #expect(Self.receive(&handler, &buffer, adding: Self.maskedFrame(0x01, length: 3, Array("abc".utf8))) == [])
        let outputs = Self.receive(&handler, &buffer, adding: Self.maskedFrame(0x80, length: 50, [0x64, 0xED, 0xA0]))  // a surrogate
        #expect(outputs == WebSocketDeflateHandlerTests.failure(1007, .invalidUTF8(offset: 5)))
    }

    @Test func aPartialBinaryFrameIsNotCheckedAndComesWhole() {
        var handler = Handler(role: .server, keepAlive: nil)
        var buffer = FrameBuffer()
        let frame = Self.maskedFrame(0x82, length: 4, [0xFF, 0xC0, 0x00, 0x01])
        #expect(Self.receive(&handler, &buffer, adding: Array(frame[0..<8])) == [])
        #expect(Self.receive(&handler, &buffer, adding: Array(frame[8...])) == [.message(.binary(Data([0xFF, 0xC0, 0x00, 0x01])))])
    }

    @Test func textArrivingOneByteAtATimeIsDeliveredWholeFrameAfterFrame() {
        var handler = Handler(role: .server, keepAlive: nil)
        var buffer = FrameBuffer()
        let first = Array("grüße, ".utf8)
        let second = Array(String(repeating: "€", count: 60).utf8)  // 180 bytes: a 16-bit length
        let bytes =
            Self.maskedFrame(0x01, length: first.count, first) + Self.maskedFrame(0x80, length: second.count, second)
            + Self.maskedFrame(0x81, length: 2, Array("ok".utf8))
        var outputs: [Handler.Output] = []
        for byte in bytes { outputs += Self.receive(&handler, &buffer, adding: [byte]) }
        #expect(outputs == [.message(.text("grüße, " + String(repeating: "€", count: 60))), .message(.text("ok"))])
        #expect(buffer.readableBytes == 0)
    }
}

/// The same over a real loopback connection: the socket's consuming read hands the handler a frame's
/// first bytes, and an invalid one fails the connection though the frame's rest never comes.
@Suite(.offThePool) struct WebSocketUTF8FailFastLoopbackTests {
    @Test func aTextFrameWhoseRestNeverArrivesIsFailedWith1007AtItsFirstInvalidByte() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let accepted = try await pair.connect()
        let recorder = RecordingWebSocketDelegate()
        let webSocket = WebSocket.server(upgraded: accepted, delegate: recorder)
        // A text frame announcing 1000 bytes; only "ok" and F5 (never UTF-8) are sent.
        pair.client.write(
            Data(WebSocketUTF8FailFastTests.maskedFrame(0x81, length: 1000, [0x6F, 0x6B, 0xF5])), withTimeout: -1, tag: 1)
        let reason = WebSocketProtocolError.invalidUTF8(offset: 2).description
        #expect(
            try await WebSocketLoopbackTests.read(UInt(4 + reason.utf8.count), from: pair)
                == [0x88, UInt8(2 + reason.utf8.count), 0x03, 0xEF] + Array(reason.utf8))
        #expect(try await recorder.events.next(within: TestTiming.hangLimit(.seconds(10))) == "closed 1007 \"\(reason)\" (not clean)")
        _ = webSocket
    }
}
