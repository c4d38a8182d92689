import Foundation
import SocketFraming
import TestSupport
import Testing

/// Body transforms between message and frame: compression with a bound, the encryption hook, chaining.
@Suite(.cpuBound) struct BodyTransformTests {
    @Test func identity_changes_nothing() throws {
        #expect(try IdentityTransform().encode(Data([1, 2])) == Data([1, 2]))
        #expect(try IdentityTransform().decode(Data([1, 2])) == Data([1, 2]))
    }

    @Test(arguments: [CompressionFormat.zlib, .gzip, .rawDeflate])
    func compression_round_trips_in_every_format(format: CompressionFormat) throws {
        let transform = CompressionTransform(format: format)
        let body = Data(utf8(String(repeating: "sticky packets ", count: 40)))
        let wire = try transform.encode(body)
        #expect(wire == (try Zlib.compress(body, format: format)))
        #expect(try transform.decode(wire) == body)
    }

    @Test func a_compression_bomb_stops_at_max_decompressed_bytes() throws {
        let bomb = try Zlib.compress(Data(count: 10 << 20))  // 10 MiB of zeros in about 10 KB
        #expect(bomb.count < 20_000)
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 1 << 20)) { try CompressionTransform().decode(bomb) }
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 100)) {
            try CompressionTransform(maxDecompressedBytes: 100).decode(try Zlib.compress(Data(count: 101)))
        }
        #expect(try CompressionTransform(maxDecompressedBytes: 100).decode(try Zlib.compress(Data(count: 100))) == Data(count: 100))
    }

    @Test func then_encodes_in_order_and_decodes_in_reverse() throws {
        let cipher = TestCipher(key: 0x33)
        let chain = CompressionTransform().then(cipher)
        let body = Data(utf8("compress before you encrypt"))
        #expect(try chain.encode(body) == (try cipher.encode(try Zlib.compress(body))))
        #expect(try chain.decode(try chain.encode(body)) == body)
    }

    @Test func a_closure_transform_is_a_quick_encryption_hook() throws {
        let reverse = ClosureTransform(
            encode: { Data($0.reversed()) },
            decode: { body throws(FramingError) in
                guard body.first != 0 else { throw .transformFailed("starts with zero") }
                return Data(body.reversed())
            })
        #expect(try reverse.encode(Data([1, 2, 3])) == Data([3, 2, 1]))
        #expect(try reverse.decode(Data([3, 2, 1])) == Data([1, 2, 3]))
        #expect(throws: FramingError.transformFailed("starts with zero")) { try reverse.decode(Data([0])) }
    }

    @Test func the_transforming_decoder_documentation_example_decodes_as_drawn() throws {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1024)
                .transformed(by: CompressionTransform()))
        reader.append(Data([0x00, 0x00, 0x00, 0x0D, 0x78, 0x9C, 0xCB, 0x48]))
        #expect(try drain(&reader) == [])
        reader.append(Data([0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x06, 0x2C, 0x02, 0x15]))
        #expect(try drain(&reader) == [Data(utf8("hello"))])
    }

    @Test func any_data_framing_takes_a_transform_and_its_length_is_that_of_the_transformed_body() throws {
        let encoder = LengthFieldPrepender(lengthFieldLength: 2).transformed(by: TestCipher(key: 1))
        #expect([UInt8](try encoder.encode(Data(utf8("ab")))) == [0x00, 0x03, 0x60, 0x63, 0xFD])
        var random = SplitMix64(seed: 5)
        let messages = (0..<30).map { _ in Data(random.bytes(count: Int.random(in: 0...300, using: &random), from: [0, 7, 9])) }
        let transform = CompressionTransform(format: .gzip).then(TestCipher(key: 0x77))
        DecoderVerifier.verifyRoundTrip(
            encoder: LengthFieldPrepender(lengthFieldLength: 4).transformed(by: transform),
            { LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 16).transformed(by: transform) },
            messages: messages, randomCuttings: 40)
    }

    @Test func a_transform_error_surfaces_from_the_reader_after_the_frames_before_it() throws {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 64)
                .transformed(by: TestCipher(key: 0)))
        reader.append(Data([0, 0, 0, 2, 0x61, 0x9E, 0, 0, 0, 1, 0x00]))
        #expect(try reader.nextFrame() == Data(utf8("a")))
        #expect(throws: FramingError.transformFailed("checksum 0x00, expected 0xFF")) { try reader.nextFrame() }
    }
}
