import Foundation
import SocketFraming
import TestSupport
import Testing

/// The examples of RFC 6455 §5.7, byte for byte, decoded and encoded, cut every way.
@Suite(.cpuBound) struct WebSocketRFCExampleTests {
    static let key = WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D)
    static let unmaskedHello: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    static let fragmentedHello: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]
    static let unmaskedPing: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
    static let maskedPong: [UInt8] = [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]

    @Test func a_single_frame_unmasked_text_message() throws {
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .client)) }, bytes: Self.unmaskedHello,
            expecting: [WebSocketFrame(opcode: .text, payload: data("Hello"))])
        let encoded = try WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .text, payload: data("Hello")))
        #expect([UInt8](encoded) == Self.unmaskedHello)
    }

    @Test func a_single_frame_masked_text_message() throws {
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .server)) }, bytes: Self.maskedHello,
            expecting: [WebSocketFrame(opcode: .text, maskingKey: Self.key, payload: data("Hello"))])
        var out = Data()
        var generator = FixedGenerator(value: 0x37FA_213D)
        try WebSocketFrameEncoder(role: .client).encode(
            WebSocketFrame(opcode: .text, payload: data("Hello")), into: &out, using: &generator)
        #expect([UInt8](out) == Self.maskedHello)
    }

    @Test func a_fragmented_unmasked_text_message() throws {
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .client)) }, bytes: Self.fragmentedHello,
            expecting: [
                WebSocketFrame(fin: false, opcode: .text, payload: data("Hel")),
                WebSocketFrame(opcode: .continuation, payload: data("lo"))
            ])
        let encoder = WebSocketFrameEncoder(role: .server)
        var out = Data()
        try encoder.encode(WebSocketFrame(fin: false, opcode: .text, payload: data("Hel")), into: &out)
        try encoder.encode(WebSocketFrame(opcode: .continuation, payload: data("lo")), into: &out)
        #expect([UInt8](out) == Self.fragmentedHello)
        for (name, chunks) in everyCutting(of: Self.fragmentedHello.count) {
            let outcome = feedMessages(Self.fragmentedHello, chunkSizes: chunks, decoder: WebSocketFrameDecoder(role: .client))
            #expect(outcome == WebSocketFeedOutcome(messages: [.text("Hello")]), "\(name)")
        }
    }

    @Test func an_unmasked_ping_and_a_masked_pong() throws {
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .client)) }, bytes: Self.unmaskedPing,
            expecting: [WebSocketFrame(opcode: .ping, payload: data("Hello"))])
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .server)) }, bytes: Self.maskedPong,
            expecting: [WebSocketFrame(opcode: .pong, maskingKey: Self.key, payload: data("Hello"))])
        #expect(
            [UInt8](try WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .ping, payload: data("Hello"))))
                == Self.unmaskedPing)
        var out = Data()
        var generator = FixedGenerator(value: 0x37FA_213D)
        try WebSocketFrameEncoder(role: .client).encode(
            WebSocketFrame(opcode: .pong, payload: data("Hello")), into: &out, using: &generator)
        #expect([UInt8](out) == Self.maskedPong)
    }

    @Test func a_256_byte_binary_message_has_a_16_bit_length() throws {
        let payload = Data((0..<256).map { UInt8(truncatingIfNeeded: $0) })
        let encoded = [UInt8](try WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .binary, payload: payload)))
        #expect(Array(encoded.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        #expect(encoded.count == 4 + 256)
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .client)) }, bytes: encoded,
            expecting: [WebSocketFrame(opcode: .binary, payload: payload)], randomCuttings: 50)
    }

    @Test func a_64_kib_binary_message_has_a_64_bit_length() throws {
        let payload = Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let encoded = [UInt8](try WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .binary, payload: payload)))
        #expect(Array(encoded.prefix(10)) == [0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00])
        #expect(encoded.count == 10 + 65536)
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .client)) }, bytes: encoded,
            expecting: [WebSocketFrame(opcode: .binary, payload: payload)], randomCuttings: 20)
    }
}
