import Foundation
import SocketFraming
import TestSupport
import Testing

/// `WebSocketFrameDecoder`: every rule of RFC 6455 §5 it enforces, with the error and its close code.
@Suite(.cpuBound) struct WebSocketFrameDecoderTests {
    /// The error decoding `bytes` all at once throws, or nil.
    static func error(
        _ bytes: [UInt8], role: WebSocketRole = .client, maxFrameSize: Int = WebSocketFrameDecoder.defaultMaxFrameSize,
        allowed: WebSocketReservedBits = []
    ) -> WebSocketProtocolError? {
        var decoder = WebSocketFrameDecoder(role: role, maxFrameSize: maxFrameSize, allowedReservedBits: allowed)
        var buffer = FrameBuffer()
        buffer.append(contentsOf: bytes)
        do {
            while try decoder.decode(&buffer) != nil {}
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8])
    func reserved_opcodes_are_refused_from_the_first_byte(opcode: UInt8) {
        #expect(Self.error([0x80 | opcode]) == .reservedOpcode(opcode))
        #expect(WebSocketProtocolError.reservedOpcode(opcode).closeCode == .protocolError)
    }

    @Test func reserved_bits_are_refused_unless_allowed() {
        #expect(Self.error([0xC1]) == .reservedBitsSet(.rsv1))
        #expect(Self.error([0xB1]) == .reservedBitsSet([.rsv2, .rsv3]))
        #expect(Self.error([0xF1], allowed: .rsv1) == .reservedBitsSet([.rsv2, .rsv3]))
        #expect(WebSocketProtocolError.reservedBitsSet(.rsv1).closeCode.rawValue == 1002)
        var decoder = WebSocketFrameDecoder(role: .client, allowedReservedBits: .rsv1)
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0xC1, 0x01, 0x41])
        let frame = try? decoder.decode(&buffer)
        #expect(frame == WebSocketFrame(reservedBits: .rsv1, opcode: .text, payload: data("A")))
        #expect(frame?.rsv1 == true && frame?.rsv2 == false && frame?.rsv3 == false)
    }

    @Test func control_frames_must_have_fin_and_at_most_125_bytes() {
        #expect(Self.error([0x09]) == .fragmentedControlFrame(.ping))
        #expect(Self.error([0x08]) == .fragmentedControlFrame(.close))
        #expect(Self.error([0x89, 126]) == .controlFrameTooLong(length: 126))
        #expect(Self.error([0x8A, 127]) == .controlFrameTooLong(length: 127))
        #expect(Self.error([0x89, 125] + Array(repeating: 0, count: 125)) == nil)
        #expect(WebSocketProtocolError.fragmentedControlFrame(.ping).closeCode == .protocolError)
        #expect(WebSocketProtocolError.controlFrameTooLong(length: 126).closeCode == .protocolError)
    }

    @Test func a_server_refuses_unmasked_frames_and_a_client_masked_ones() {
        #expect(Self.error([0x81, 0x00], role: .server) == .unmaskedFrame)
        #expect(Self.error([0x81, 0x80], role: .client) == .maskedFrame)
        #expect(WebSocketProtocolError.unmaskedFrame.closeCode == .protocolError)
        #expect(WebSocketProtocolError.maskedFrame.closeCode == .protocolError)
    }

    @Test func lengths_must_be_in_their_minimal_encoding() {
        #expect(Self.error([0x82, 126, 0x00, 0x7D]) == .nonMinimalLength(125))
        #expect(Self.error([0x82, 126, 0x00, 0x00]) == .nonMinimalLength(0))
        #expect(Self.error([0x82, 127, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) == .nonMinimalLength(65535))
        #expect(Self.error([0x82, 127, 0, 0, 0, 0, 0, 0, 0x00, 0x05]) == .nonMinimalLength(5))
        #expect(Self.error([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0]) == .lengthTopBitSet(0x8000_0000_0000_0000))
        #expect(Self.error([0x82, 127, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .lengthTopBitSet(.max))
        #expect(WebSocketProtocolError.nonMinimalLength(5).closeCode == .protocolError)
        #expect(WebSocketProtocolError.lengthTopBitSet(.max).closeCode == .protocolError)
        // The smallest lengths of each encoding are accepted.
        #expect(Self.error([0x82, 126, 0x00, 0x7E] + Array(repeating: 0, count: 126)) == nil)
        #expect(Self.error([0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0] + Array(repeating: 0, count: 65536)) == nil)
    }

    @Test func a_frame_over_max_frame_size_is_refused_from_its_header_before_its_payload() {
        // Only the header has arrived: the refusal does not wait for the payload.
        #expect(Self.error([0x82, 126, 0x01, 0x00], maxFrameSize: 255) == .frameTooLarge(length: 256, maxFrameSize: 255))
        #expect(Self.error([0x82, 126, 0x00, 0xFF], maxFrameSize: 255) == nil)
        #expect(
            Self.error([0x82, 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
                == .frameTooLarge(length: 0x7FFF_FFFF_FFFF_FFFF, maxFrameSize: 16_777_216))
        #expect(Self.error([0x82, 127, 0, 0, 0, 0, 1, 0, 0, 1]) == .frameTooLarge(length: 16_777_217, maxFrameSize: 16_777_216))
        #expect(Self.error([0x82, 0xFE, 0x01, 0x00], role: .server, maxFrameSize: 255) == .frameTooLarge(length: 256, maxFrameSize: 255))
        #expect(WebSocketProtocolError.frameTooLarge(length: 256, maxFrameSize: 255).closeCode == .messageTooBig)
        #expect(WebSocketFrameDecoder(role: .client).maxFrameSize == 16 * 1024 * 1024)
    }

    @Test func nothing_is_consumed_when_a_frame_is_refused_or_incomplete() throws {
        var decoder = WebSocketFrameDecoder(role: .server)
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0x81, 0x85, 0x37, 0xFA, 0x21])
        #expect(try decoder.decode(&buffer) == nil)
        #expect(buffer.readableBytes == 5)
        var refusing = WebSocketFrameDecoder(role: .client)
        #expect(throws: WebSocketProtocolError.maskedFrame) { try refusing.decode(&buffer) }
        #expect(buffer.readableBytes == 5)
    }

    @Test func the_stream_ending_inside_a_frame_is_a_truncated_frame() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0x82, 0x00, 0x82, 0x03, 0x01])
        #expect(try decoder.decodeLast(&buffer) == WebSocketFrame(opcode: .binary))
        #expect(throws: WebSocketProtocolError.truncatedFrame(bufferedBytes: 3)) { try decoder.decodeLast(&buffer) }
        #expect(WebSocketProtocolError.truncatedFrame(bufferedBytes: 3).closeCode == .abnormalClosure)
    }

    @Test func maximum_frame_length_counts_the_longest_header_of_the_role() {
        #expect(WebSocketFrameDecoder(role: .client, maxFrameSize: 125).maximumFrameLength == 127)
        #expect(WebSocketFrameDecoder(role: .server, maxFrameSize: 125).maximumFrameLength == 131)
        #expect(WebSocketFrameDecoder(role: .server, maxFrameSize: 65535).maximumFrameLength == 65535 + 8)
        #expect(WebSocketFrameDecoder(role: .server, maxFrameSize: 65536).maximumFrameLength == 65536 + 14)
        #expect(WebSocketFrameDecoder(role: .client).maximumFrameLength == 16_777_216 + 10)
        #expect(WebSocketFrameDecoder(role: .server, maxFrameSize: .max).maximumFrameLength == .max)
    }

    @Test func frames_of_the_largest_size_decode_however_a_bounded_read_cuts_them() throws {
        for (role, size) in [(WebSocketRole.server, 125), (.server, 300), (.client, 300)] {
            var generator = FixedGenerator(value: 0x0102_0304)
            var bytes = Data()
            let frame = WebSocketFrame(opcode: .binary, payload: Data(repeating: 0xAB, count: size))
            try WebSocketFrameEncoder(role: role == .server ? .client : .server).encode(frame, into: &bytes, using: &generator)
            let decoder = WebSocketFrameDecoder(role: role, maxFrameSize: size)
            #expect(bytes.count == decoder.maximumFrameLength)
            let outcome = readBounded(
                VerifiedWebSocketDecoder(decoder: decoder), segments: [[UInt8](bytes), [UInt8](bytes)],
                limit: decoder.maximumFrameLength)
            #expect(outcome.error == nil)
            #expect(outcome.frames.map(\.payload) == [frame.payload, frame.payload])
        }
    }

    /// Masked frames of every length from 0 to 300 (so every tail after the 8-byte steps), one after
    /// another, cut every way: split in the header, the extended length, the masking key, the payload.
    @Test func masked_frames_of_every_length_round_trip_under_every_cutting() throws {
        var random = SplitMix64(seed: 33)
        var generator = SplitMix64(seed: 6455)
        let encoder = WebSocketFrameEncoder(role: .client)
        var stream = Data()
        var frames: [WebSocketFrame] = []
        for length in [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 64, 65, 125, 126, 127, 300] {
            let payload = Data(random.bytes(count: length))
            let opcode: WebSocketOpcode = length <= 125 && length % 2 == 1 ? .ping : .binary
            let before = stream.count
            try encoder.encode(WebSocketFrame(opcode: opcode, payload: payload), into: &stream, using: &generator)
            let keyOffset = before + 2 + (length > 125 ? 2 : 0)
            let keyBytes = [UInt8](stream[keyOffset..<(keyOffset + 4)])
            let key = WebSocketMaskingKey(keyBytes[0], keyBytes[1], keyBytes[2], keyBytes[3])
            frames.append(WebSocketFrame(opcode: opcode, maskingKey: key, payload: payload))
        }
        DecoderVerifier.verify(
            { VerifiedWebSocketDecoder(decoder: WebSocketFrameDecoder(role: .server)) }, bytes: [UInt8](stream),
            expecting: frames, randomCuttings: 100)
    }
}
