import Foundation
import SocketFraming
import TestSupport
import Testing

/// The eight-byte header: service id (4 bytes) and body length (4 bytes), big-endian (article 004, M3.5).
@Suite(.cpuBound) struct EightByteHeaderFrameTests {
    @Test func the_decoder_documentation_example_decodes_as_drawn() throws {
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder())
        reader.append(Data([0, 0, 0, 1, 0, 0]))
        #expect(try drain(&reader) == [])
        reader.append(Data([0, 2, 0x68, 0x69, 0, 0, 0, 2, 0]))
        #expect(try drain(&reader) == [EightByteHeaderFrame(serviceID: 1, body: Data(utf8("hi")))])
        reader.append(Data([0, 0, 0]))
        #expect(try drain(&reader) == [EightByteHeaderFrame(serviceID: 2, body: Data())])
        #expect(try reader.finish() == nil)
    }

    @Test func the_encoder_documentation_example_encodes_as_drawn() throws {
        let encoder = EightByteHeaderFrameEncoder()
        var out = Data()
        try encoder.encode(EightByteHeaderFrame(serviceID: 1, body: Data(utf8("hi"))), into: &out)
        try encoder.encode(EightByteHeaderFrame(serviceID: 2, body: Data()), into: &out)
        #expect([UInt8](out) == [0, 0, 0, 1, 0, 0, 0, 2, 0x68, 0x69, 0, 0, 0, 2, 0, 0, 0, 0])
    }

    @Test func every_header_field_is_big_endian() throws {
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder())
        reader.append(Data([0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0, 1, 0x7A]))
        #expect(try reader.nextFrame() == EightByteHeaderFrame(serviceID: 0xDEAD_BEEF, body: Data([0x7A])))
    }

    @Test func a_body_of_exactly_max_body_length_is_accepted_and_one_more_byte_is_refused_at_the_header() throws {
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder(maxBodyLength: 3))
        reader.append(Data([0, 0, 0, 9, 0, 0, 0, 3, 1, 2, 3]))
        #expect(try reader.nextFrame() == EightByteHeaderFrame(serviceID: 9, body: Data([1, 2, 3])))
        reader.append(Data([0, 0, 0, 9, 0, 0, 0, 4]))
        #expect(throws: FramingError.frameTooLong(length: 4, maxFrameLength: 3)) { try reader.nextFrame() }
        #expect(reader.bufferedBytes == 8)
    }

    @Test func a_length_claiming_4_GB_fails_at_once_and_buffers_nothing_more() throws {
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder())
        reader.append(Data([0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF]))
        #expect(throws: FramingError.frameTooLong(length: 4_294_967_295, maxFrameLength: 1 << 20)) {
            try reader.nextFrame()
        }
    }

    @Test func finishing_inside_a_frame_is_a_truncated_frame() throws {
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder())
        reader.append(Data([0, 0, 0, 1, 0, 0, 0, 5, 0x61]))
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 9)) { try reader.finish() }
    }

    @Test func the_length_is_that_of_the_compressed_body() throws {
        let body = Data(repeating: 0x61, count: 1000)
        let compressed = try Zlib.compress(body, format: .gzip)
        let wire = try EightByteHeaderFrameEncoder(transform: CompressionTransform(format: .gzip))
            .encode(EightByteHeaderFrame(serviceID: 3, body: body))
        #expect([UInt8](wire.prefix(8)) == [0, 0, 0, 3, 0, 0, 0, UInt8(compressed.count)])
        #expect(wire.dropFirst(8) == compressed)
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder(transform: CompressionTransform(format: .gzip)))
        reader.append(wire)
        #expect(try reader.nextFrame() == EightByteHeaderFrame(serviceID: 3, body: body))
    }

    @Test func the_length_is_that_of_the_encrypted_body() throws {
        let cipher = TestCipher(key: 0x5A)
        let wire = try EightByteHeaderFrameEncoder(transform: cipher).encode(EightByteHeaderFrame(serviceID: 7, body: Data(utf8("hi"))))
        // "hi" XOR 0x5A, then the 1-byte checksum the cipher appends: 3 bytes on the wire.
        #expect([UInt8](wire) == [0, 0, 0, 7, 0, 0, 0, 3, 0x32, 0x33, 0xA4])
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder(transform: cipher))
        reader.append(wire)
        #expect(try reader.nextFrame() == EightByteHeaderFrame(serviceID: 7, body: Data(utf8("hi"))))
    }

    @Test func a_body_the_cipher_rejects_is_its_transform_failure() {
        var reader = FrameReader(decoder: EightByteHeaderFrameDecoder(transform: TestCipher(key: 0x5A)))
        reader.append(Data([0, 0, 0, 7, 0, 0, 0, 3, 0x32, 0x33, 0x00]))
        #expect(throws: FramingError.transformFailed("checksum 0x00, expected 0xA4")) { try reader.nextFrame() }
    }

    @Test func random_frames_round_trip_plain_compressed_and_encrypted_under_random_cuts() {
        let transforms: [any BodyTransform] = [
            IdentityTransform(), CompressionTransform(format: .rawDeflate),
            CompressionTransform(format: .zlib).then(TestCipher(key: 0xA5))
        ]
        for (index, transform) in transforms.enumerated() {
            var random = SplitMix64(seed: UInt64(index))
            let messages = (0..<25).map { _ in
                EightByteHeaderFrame(
                    serviceID: UInt32.random(in: 0...UInt32.max, using: &random),
                    body: Data(
                        random.bytes(
                            count: Int.random(in: 0...200, using: &random),
                            from: [0, 1, 0x61, 0xFF])))
            }
            DecoderVerifier.verifyRoundTrip(
                encoder: EightByteHeaderFrameEncoder(transform: transform),
                { EightByteHeaderFrameDecoder(transform: transform) },
                messages: messages, randomCuttings: 40, seed: UInt64(index))
        }
    }
}

/// A toy cipher for the encryption hook: XOR with `key`, then a checksum byte (the XOR of all the plain
/// bytes, itself XORed with the key's complement) that `decode` checks, so tampering is noticed.
struct TestCipher: BodyTransform {
    let key: UInt8

    func encode(_ body: Data) throws(FramingError) -> Data {
        var out = Data(body.map { $0 ^ key })
        out.append(body.reduce(0, ^) ^ ~key)
        return out
    }

    func decode(_ body: Data) throws(FramingError) -> Data {
        guard let checksum = body.last else { throw .transformFailed("empty body, expected a checksum") }
        let plain = Data(body.dropLast().map { $0 ^ key })
        let expected = plain.reduce(0, ^) ^ ~key
        guard checksum == expected else {
            throw .transformFailed("checksum 0x\(hex(checksum)), expected 0x\(hex(expected))")
        }
        return plain
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
