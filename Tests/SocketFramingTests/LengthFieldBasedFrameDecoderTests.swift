import Foundation
import SocketFraming
import TestSupport
import Testing

/// Configurations and bad lengths of `LengthFieldBasedFrameDecoder` beyond Netty's javadoc examples.
@Suite(.cpuBound) struct LengthFieldBasedFrameDecoderTests {
    func decode(_ decoder: LengthFieldBasedFrameDecoder, _ bytes: [UInt8]) throws(FramingError) -> [Data] {
        var reader = FrameReader(decoder: decoder)
        reader.append(Data(bytes))
        return try drain(&reader)
    }

    @Test func one_byte_length_field() {
        DecoderVerifier.verify(
            { LengthFieldBasedFrameDecoder(maxFrameLength: 256, lengthFieldLength: 1, initialBytesToStrip: 1) },
            bytes: [3, 0x61, 0x62, 0x63, 0, 1, 0xFF],
            expecting: [Data(utf8("abc")), Data(), Data([0xFF])])
    }

    @Test func two_byte_little_endian_length_field() {
        DecoderVerifier.verify(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldLength: 2, byteOrder: .littleEndian,
                    initialBytesToStrip: 2)
            }, bytes: [0x03, 0x00, 0x61, 0x62, 0x63, 0x01, 0x00, 0x64], expecting: [Data(utf8("abc")), Data(utf8("d"))])
    }

    @Test func four_byte_little_endian_length_prefix_as_some_articles_use() {
        DecoderVerifier.verify(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldLength: 4, byteOrder: .littleEndian,
                    initialBytesToStrip: 4)
            }, bytes: [0x02, 0, 0, 0, 0x68, 0x69, 0, 0, 0, 0], expecting: [Data(utf8("hi")), Data()])
    }

    @Test func eight_byte_length_field_counting_the_whole_frame() {
        DecoderVerifier.verify(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldLength: 8, lengthAdjustment: -8,
                    initialBytesToStrip: 8)
            }, bytes: [0, 0, 0, 0, 0, 0, 0, 10, 0x68, 0x69, 0, 0, 0, 0, 0, 0, 0, 8],
            expecting: [Data(utf8("hi")), Data()])
    }

    @Test func eight_byte_service_id_and_length_header_kept_in_the_frame() {
        // MISSION M3.5: service id (4 bytes) + body length (4 bytes), big-endian.
        let wire: [UInt8] = [0, 0, 0x27, 0x11, 0, 0, 0, 2, 0x68, 0x69]
        DecoderVerifier.verify(
            { LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldOffset: 4, lengthFieldLength: 4) },
            bytes: wire + wire, expecting: [Data(wire), Data(wire)])
    }

    @Test func length_field_at_offset_3_with_header_after_it_stripped_partly() {
        // 3-byte magic, 3-byte length of the body, 1-byte type, body; strip the magic only.
        let wire: [UInt8] = [0xAA, 0xBB, 0xCC, 0x00, 0x00, 0x02, 0x07, 0x68, 0x69]
        DecoderVerifier.verify(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 3, lengthFieldLength: 3,
                    lengthAdjustment: 1, initialBytesToStrip: 3)
            }, bytes: wire + wire, expecting: [Data(wire[3...]), Data(wire[3...])])
    }

    @Test func length_negative_after_adjustment_is_an_invalid_length_field() {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldLength: 2, lengthAdjustment: -2)
        #expect(throws: FramingError.invalidLengthField(1)) { try decode(decoder, [0x00, 0x01, 0xAA]) }
    }

    @Test func length_adjusted_to_zero_is_a_frame_of_just_the_header() throws {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldLength: 2, lengthAdjustment: -2)
        #expect(try decode(decoder, [0x00, 0x02]) == [Data([0x00, 0x02])])
    }

    @Test func eight_byte_length_field_with_the_high_bit_set_is_an_invalid_length_field() {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldLength: 8)
        #expect(throws: FramingError.invalidLengthField(Int64.min)) {
            try decode(decoder, [0x80, 0, 0, 0, 0, 0, 0, 0])
        }
        #expect(throws: FramingError.invalidLengthField(-1)) {
            try decode(decoder, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        }
    }

    @Test func eight_byte_length_that_overflows_with_the_header_is_an_invalid_length_field() {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldLength: 8)
        #expect(throws: FramingError.invalidLengthField(Int64.max)) {
            try decode(decoder, [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        }
    }

    @Test func eight_byte_length_just_below_overflow_is_too_long_not_invalid() {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldLength: 8)
        #expect(throws: FramingError.frameTooLong(length: Int.max, maxFrameLength: 1024)) {
            try decode(decoder, [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF7])
        }
    }

    @Test func frame_shorter_than_initial_bytes_to_strip_is_an_invalid_length_field() {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldLength: 1, initialBytesToStrip: 3)
        #expect(throws: FramingError.invalidLengthField(1)) { try decode(decoder, [0x01, 0xAA]) }
    }

    @Test func max_frame_length_counts_the_header_and_the_body() throws {
        let decoder = LengthFieldBasedFrameDecoder(maxFrameLength: 5, lengthFieldOffset: 1, lengthFieldLength: 2)
        #expect(try decode(decoder, [0xCA, 0x00, 0x02, 0x61, 0x62]) == [Data([0xCA, 0x00, 0x02, 0x61, 0x62])])
        #expect(throws: FramingError.frameTooLong(length: 6, maxFrameLength: 5)) {
            try decode(decoder, [0xCA, 0x00, 0x03])
        }
    }

    @Test func fail_fast_throws_when_the_length_arrives_then_skips_the_frame_and_resumes() throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 8))
        reader.append(Data([0, 0, 0, 10, 1, 2]))
        #expect(throws: FramingError.frameTooLong(length: 14, maxFrameLength: 8)) { try reader.nextFrame() }
        #expect(reader.bufferedBytes == 0)
        reader.append(Data([3, 4, 5, 6, 7]))
        #expect(try reader.nextFrame() == nil)
        #expect(reader.bufferedBytes == 0)
        reader.append(Data([8, 9, 10, 0, 0, 0, 2, 0x6F, 0x6B]))
        #expect(try drain(&reader) == [Data(utf8("ok"))])
    }

    @Test func without_fail_fast_the_error_comes_once_the_too_long_frame_is_discarded_then_decoding_resumes() throws {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder(
                maxFrameLength: 8, lengthFieldLength: 4, initialBytesToStrip: 4, failFast: false))
        reader.append(Data([0, 0, 0, 10, 1, 2, 3, 4, 5]))
        #expect(try reader.nextFrame() == nil)
        #expect(reader.bufferedBytes == 0)
        reader.append(Data([6, 7, 8, 9]))
        #expect(try reader.nextFrame() == nil)
        reader.append(Data([10, 0, 0, 0, 2, 0x6F, 0x6B]))
        #expect(throws: FramingError.frameTooLong(length: 14, maxFrameLength: 8)) { try reader.nextFrame() }
        #expect(try drain(&reader) == [Data(utf8("ok"))])
    }

    @Test func without_fail_fast_a_too_long_frame_already_buffered_throws_at_once() {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder(
                maxFrameLength: 5, lengthFieldLength: 1, failFast: false))
        reader.append(Data([5, 1, 2, 3, 4, 5, 0]))
        #expect(throws: FramingError.frameTooLong(length: 6, maxFrameLength: 5)) { try reader.nextFrame() }
        #expect(reader.bufferedBytes == 1)
    }

    @Test func without_fail_fast_a_stream_ending_inside_a_too_long_frame_throws_frame_too_long() throws {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder(
                maxFrameLength: 8, lengthFieldLength: 4, initialBytesToStrip: 4, failFast: false))
        reader.append(Data([0, 0, 0, 10, 1, 2]))
        #expect(try reader.nextFrame() == nil)
        #expect(throws: FramingError.frameTooLong(length: 14, maxFrameLength: 8)) { try reader.finish() }
    }

    @Test func with_fail_fast_a_stream_ending_inside_a_reported_too_long_frame_owes_nothing_more() throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 8))
        reader.append(Data([0, 0, 0, 10, 1, 2]))
        #expect(throws: FramingError.frameTooLong(length: 14, maxFrameLength: 8)) { try reader.nextFrame() }
        #expect(try reader.finish() == nil)
    }

    @Test func random_garbage_never_traps_and_never_buffers_more_than_a_frame() {
        let decoders = [
            LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 300),
            LengthFieldBasedFrameDecoder(maxFrameLength: 300, lengthFieldLength: 1, lengthAdjustment: -1),
            LengthFieldBasedFrameDecoder(
                maxFrameLength: 300, lengthFieldOffset: 1, lengthFieldLength: 3,
                byteOrder: .littleEndian, lengthAdjustment: 1, initialBytesToStrip: 2,
                failFast: false),
            LengthFieldBasedFrameDecoder(maxFrameLength: 300, lengthFieldLength: 8, lengthAdjustment: -100)
        ]
        var random = SplitMix64(seed: 7)
        for (index, decoder) in decoders.enumerated() {
            for _ in 0..<200 {
                var reader = FrameReader(decoder: decoder)
                do {
                    for _ in 0..<20 {
                        let count = Int.random(in: 0...50, using: &random)
                        reader.append(Data((0..<count).map { _ in UInt8.random(in: 0...3, using: &random) * 85 }))
                        _ = try drain(&reader)
                        #expect(reader.bufferedBytes <= 300, "decoder #\(index)")
                    }
                    while try reader.finish() != nil {}
                } catch {
                    continue  // an error for the connection is fine; a trap is not
                }
            }
        }
    }
}

@Suite(.cpuBound) struct LengthFieldFrameSlicerTests {
    func boundary(_ decoder: LengthFieldBasedFrameDecoder, _ bytes: [UInt8]) throws -> Int? {
        try bytes.withUnsafeBytes { try decoder.frameLength(in: $0) }
    }

    @Test func theWholeFrameLengthHeaderIncludedAsNettyComputesIt() throws {
        let lp4 = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldLength: 4, initialBytesToStrip: 0)
        #expect(try boundary(lp4, [0, 0, 0]) == nil)
        #expect(try boundary(lp4, [0, 0, 0, 2, 9]) == nil)
        #expect(try boundary(lp4, [0, 0, 0, 2, 9, 9, 1]) == 6)
        // Netty's example 5: a 3-byte length at offset 2 that counts the body only, after a 2-byte header.
        let offset = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldOffset: 2, lengthFieldLength: 3, lengthAdjustment: 0)
        #expect(try boundary(offset, [0xCA, 0xFE, 0, 0, 3, 1, 2, 3]) == 8)
        // Stripping does not apply: the boundary covers the bytes as they came.
        let stripped = LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 100)
        #expect(try boundary(stripped, [0, 0, 0, 1, 7]) == 5)
        let littleEndian = LengthFieldBasedFrameDecoder(maxFrameLength: 1000, lengthFieldLength: 2, byteOrder: .littleEndian)
        #expect(try boundary(littleEndian, [3, 0, 7, 8, 9, 1]) == 5)
        #expect(try boundary(littleEndian, [0, 1] + [UInt8](repeating: 0, count: 256)) == 258)
    }

    @Test func tooLongAndNegativeLengthsThrowAsSoonAsTheFieldIsRead() {
        let lp4 = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldLength: 4, initialBytesToStrip: 0)
        #expect(throws: FramingError.frameTooLong(length: 101, maxFrameLength: 100)) { try boundary(lp4, [0, 0, 0, 97]) }
        let adjusted = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldLength: 2, lengthAdjustment: -5)
        #expect(throws: FramingError.invalidLengthField(1)) { try boundary(adjusted, [0, 1]) }
    }

    func run(_ decoder: LengthFieldBasedFrameDecoder, _ bytes: [UInt8]) throws -> Int {
        try bytes.withUnsafeBytes { try decoder.wholeFramesLength(in: $0) }
    }

    @Test func theRunOfWholeFramesStopsBeforeAPartialOne() throws {
        let lp4 = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldLength: 4, initialBytesToStrip: 0)
        #expect(try run(lp4, []) == 0)
        #expect(try run(lp4, [0, 0, 0, 2, 9]) == 0)
        #expect(try run(lp4, [0, 0, 0, 1, 7]) == 5)
        // Two whole frames (5 and 6 bytes), then 3 bytes of a third.
        #expect(try run(lp4, [0, 0, 0, 1, 7, 0, 0, 0, 2, 8, 9, 0, 0, 0]) == 11)
        // An empty payload is a whole 4-byte frame.
        #expect(try run(lp4, [0, 0, 0, 0, 0, 0, 0, 1, 7]) == 9)
    }

    @Test func aBadFrameEndsTheRunAfterGoodOnesAndThrowsWhenFirst() {
        let lp4 = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldLength: 4, initialBytesToStrip: 0)
        let good: [UInt8] = [0, 0, 0, 1, 7]
        let tooLong: [UInt8] = [0, 0, 0, 97]
        #expect((try? run(lp4, good + tooLong)) == 5)
        #expect(throws: FramingError.frameTooLong(length: 101, maxFrameLength: 100)) { try run(lp4, tooLong + good) }
    }
}
