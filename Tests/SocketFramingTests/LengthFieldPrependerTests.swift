import Foundation
import SocketFraming
import TestSupport
import Testing

@Suite(.cpuBound) struct LengthFieldPrependerTests {
    static let content = utf8("HELLO, WORLD")  // 12 bytes

    @Test func two_byte_big_endian_length_before_the_message() throws {
        #expect(
            try LengthFieldPrepender(lengthFieldLength: 2).encode(Data(Self.content))
                == Data([0x00, 0x0C] + Self.content))
    }

    @Test func the_type_documentation_example_encodes_as_drawn() throws {
        let encoder = LengthFieldPrepender(lengthFieldLength: 2)
        var out = Data()
        try encoder.encode(Data(Self.content), into: &out)
        try encoder.encode(Data(), into: &out)
        #expect(
            out
                == Data([
                    0x00, 0x0C, 0x48, 0x45, 0x4C, 0x4C, 0x4F, 0x2C, 0x20, 0x57, 0x4F, 0x52, 0x4C, 0x44,
                    0x00, 0x00
                ]))
    }

    @Test func every_field_width_in_both_byte_orders() throws {
        let message = Data([0x61, 0x62, 0x63])
        let expected: [(Int, ByteOrder, [UInt8])] = [
            (1, .bigEndian, [0x03]),
            (2, .littleEndian, [0x03, 0x00]),
            (3, .bigEndian, [0x00, 0x00, 0x03]),
            (3, .littleEndian, [0x03, 0x00, 0x00]),
            (4, .bigEndian, [0x00, 0x00, 0x00, 0x03]),
            (4, .littleEndian, [0x03, 0x00, 0x00, 0x00]),
            (8, .bigEndian, [0, 0, 0, 0, 0, 0, 0, 0x03]),
            (8, .littleEndian, [0x03, 0, 0, 0, 0, 0, 0, 0])
        ]
        for (width, order, header) in expected {
            #expect(
                try LengthFieldPrepender(lengthFieldLength: width, byteOrder: order).encode(message)
                    == Data(header + [0x61, 0x62, 0x63]), "width \(width) \(order)")
        }
    }

    @Test func length_including_the_length_field_and_an_adjustment() throws {
        #expect(
            try LengthFieldPrepender(lengthFieldLength: 2, lengthIncludesLengthFieldLength: true)
                .encode(Data(Self.content)) == Data([0x00, 0x0E] + Self.content))
        #expect(
            try LengthFieldPrepender(lengthFieldLength: 2, lengthAdjustment: 1, lengthIncludesLengthFieldLength: true)
                .encode(Data(Self.content)) == Data([0x00, 0x0F] + Self.content))
    }

    @Test func a_message_exactly_filling_the_field_fits_and_one_more_byte_does_not() throws {
        let encoder = LengthFieldPrepender(lengthFieldLength: 1)
        #expect(try encoder.encode(Data(count: 255)).count == 256)
        var out = Data([0x01])
        #expect(throws: FramingError.messageTooLong(length: 256, maxLength: 255)) {
            try encoder.encode(Data(count: 256), into: &out)
        }
        #expect(out == Data([0x01]))
    }

    @Test func a_two_byte_field_counting_itself_overflows_two_bytes_earlier() {
        #expect(throws: FramingError.messageTooLong(length: 65_536, maxLength: 65_535)) {
            try LengthFieldPrepender(lengthFieldLength: 2, lengthIncludesLengthFieldLength: true).encode(Data(count: 65_534))
        }
    }

    @Test func a_length_negative_after_adjustment_is_an_invalid_length_field() {
        #expect(throws: FramingError.invalidLengthField(-1)) {
            try LengthFieldPrepender(lengthFieldLength: 4, lengthAdjustment: -3).encode(Data(count: 2))
        }
    }

    @Test func max_length_per_field_width() {
        #expect(
            [1, 2, 3, 4, 8].map { LengthFieldPrepender(lengthFieldLength: $0).maxLength }
                == [255, 65_535, 16_777_215, 4_294_967_295, Int.max])
    }

    @Test func round_trips_through_the_matching_decoder() throws {
        let messages = [Data(), Data(Self.content), Data(repeating: 0x5A, count: 300)]
        let pairs: [(LengthFieldPrepender, () -> LengthFieldBasedFrameDecoder)] = [
            (LengthFieldPrepender(lengthFieldLength: 4), { .lengthPrefixed(maxFrameLength: 1024) }),
            (
                LengthFieldPrepender(lengthFieldLength: 2, byteOrder: .littleEndian, lengthIncludesLengthFieldLength: true),
                {
                    LengthFieldBasedFrameDecoder(
                        maxFrameLength: 1024, lengthFieldLength: 2, byteOrder: .littleEndian,
                        lengthAdjustment: -2, initialBytesToStrip: 2)
                }
            ),
            (
                LengthFieldPrepender(lengthFieldLength: 3, lengthAdjustment: 5),
                {
                    LengthFieldBasedFrameDecoder(
                        maxFrameLength: 1024, lengthFieldLength: 3, lengthAdjustment: -5,
                        initialBytesToStrip: 3)
                }
            ),
            (
                LengthFieldPrepender(lengthFieldLength: 8, byteOrder: .littleEndian),
                {
                    LengthFieldBasedFrameDecoder(
                        maxFrameLength: 1024, lengthFieldLength: 8, byteOrder: .littleEndian,
                        initialBytesToStrip: 8)
                }
            )
        ]
        for (encoder, makeDecoder) in pairs {
            var wire = Data()
            for message in messages { try encoder.encode(message, into: &wire) }
            DecoderVerifier.verify(makeDecoder, bytes: Array(wire), expecting: messages, randomCuttings: 20)
        }
    }
}
