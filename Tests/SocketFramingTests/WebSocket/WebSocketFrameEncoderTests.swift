import Foundation
import SocketFraming
import TestSupport
import Testing

/// `WebSocketFrameEncoder`: minimal length encodings, masking by role, the control-frame rules.
@Suite struct WebSocketFrameEncoderTests {
    /// Returns 1, 2, 3, ...: a new key for each frame, which shows one is drawn per frame.
    struct CountingGenerator: RandomNumberGenerator {
        var count: UInt64 = 0
        mutating func next() -> UInt64 {
            count += 1
            return count
        }
    }

    static func header(length: Int, role: WebSocketRole = .server) throws -> [UInt8] {
        var generator = FixedGenerator(value: 0xA1B2_C3D4)
        var out = Data()
        try WebSocketFrameEncoder(role: role).encode(
            WebSocketFrame(opcode: .binary, payload: Data(count: length)), into: &out, using: &generator)
        return Array([UInt8](out).prefix(out.count - length))
    }

    @Test func lengths_use_the_minimal_encoding_at_every_boundary() throws {
        #expect(try Self.header(length: 0) == [0x82, 0x00])
        #expect(try Self.header(length: 125) == [0x82, 0x7D])
        #expect(try Self.header(length: 126) == [0x82, 0x7E, 0x00, 0x7E])
        #expect(try Self.header(length: 65535) == [0x82, 0x7E, 0xFF, 0xFF])
        #expect(try Self.header(length: 65536) == [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
        #expect(try Self.header(length: 126, role: .client) == [0x82, 0xFE, 0x00, 0x7E, 0xA1, 0xB2, 0xC3, 0xD4])
    }

    @Test func a_client_masks_each_frame_with_a_fresh_key() throws {
        var generator = CountingGenerator()
        var out = Data()
        let encoder = WebSocketFrameEncoder(role: .client)
        try encoder.encode(WebSocketFrame(opcode: .binary, payload: Data([0xFF])), into: &out, using: &generator)
        try encoder.encode(WebSocketFrame(opcode: .binary, payload: Data([0xFF])), into: &out, using: &generator)
        #expect([UInt8](out) == [0x82, 0x81, 0, 0, 0, 1, 0xFF, 0x82, 0x81, 0, 0, 0, 2, 0xFF ^ 0x00])
        #expect(generator.count == 2)
        // With the system's generator the key is in the frame and unmasks the payload.
        let encoded = [UInt8](try encoder.encode(WebSocketFrame(opcode: .text, payload: data("Hello"))))
        #expect(encoded.count == 11 && encoded[0] == 0x81 && encoded[1] == 0x85)
        let unmasked = (0..<5).map { encoded[6 + $0] ^ encoded[2 + $0 % 4] }
        #expect(unmasked == utf8("Hello"))
    }

    @Test func a_server_never_masks_even_a_frame_that_carries_a_key() throws {
        let frame = WebSocketFrame(opcode: .binary, maskingKey: WebSocketMaskingKey(rawValue: 0x0102_0304), payload: Data([7]))
        #expect([UInt8](try WebSocketFrameEncoder(role: .server).encode(frame)) == [0x82, 0x01, 0x07])
    }

    @Test func reserved_bits_and_fin_are_written_as_the_frame_has_them() throws {
        let encoder = WebSocketFrameEncoder(role: .server)
        let frame = WebSocketFrame(fin: false, reservedBits: [.rsv1, .rsv3], opcode: .text)
        #expect([UInt8](try encoder.encode(frame)) == [0x51, 0x00])
    }

    @Test func control_frames_the_rfc_forbids_are_refused() throws {
        let encoder = WebSocketFrameEncoder(role: .server)
        #expect(throws: WebSocketProtocolError.fragmentedControlFrame(.ping)) {
            try encoder.encode(WebSocketFrame(fin: false, opcode: .ping))
        }
        #expect(throws: WebSocketProtocolError.controlFrameTooLong(length: 126)) {
            try encoder.encode(WebSocketFrame(opcode: .pong, payload: Data(count: 126)))
        }
        var out = Data([0xEE])
        #expect(throws: WebSocketProtocolError.controlFrameTooLong(length: 126)) {
            try encoder.encode(WebSocketFrame(opcode: .close, payload: Data(count: 126)), into: &out)
        }
        #expect(out == Data([0xEE]))
        #expect([UInt8](try encoder.encode(WebSocketFrame(opcode: .ping, payload: Data(count: 125)))).prefix(2) == [0x89, 0x7D])
    }

    @Test func masking_in_words_equals_masking_byte_by_byte_at_every_offset_in_place_or_copying() {
        let key = WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D)
        #expect(key.bytes == [0x37, 0xFA, 0x21, 0x3D])
        #expect(key.rawValue == 0x37FA_213D)
        #expect(key.description == "37 fa 21 3d")
        // Up to 101 bytes: the 32-byte loop, the 8-byte loop and the byte tail, each alone and together.
        let original = (0..<101).map { UInt8(truncatingIfNeeded: $0 * 5) }
        for offset in 0..<5 {
            for count in 0...original.count {
                let expected = (0..<count).map { original[$0] ^ key.bytes[($0 + offset) % 4] }
                var bytes = Array(original.prefix(count))
                bytes.withUnsafeMutableBytes { key.apply(to: $0, offset: offset) }
                #expect(bytes == expected, "in place: offset \(offset), \(count) bytes")
                var copy = [UInt8](repeating: 0xEE, count: count + 1)
                original.prefix(count).withUnsafeBytes { source in
                    copy.withUnsafeMutableBytes { key.apply(from: source, to: $0.baseAddress, offset: offset) }
                }
                #expect(copy == expected + [0xEE], "copying: offset \(offset), \(count) bytes, nothing written past them")
            }
        }
    }
}
