import Foundation
import SocketFraming
import TestSupport
import Testing

/// `LengthFieldPrepender` and `LengthFieldBasedFrameDecoder` together: every width, both byte orders,
/// adjustments, random messages under random cuts; and lengths that must be errors, never traps.
@Suite(.cpuBound) struct LengthFieldRoundTripTests {
    struct Configuration: Sendable, CustomTestStringConvertible {
        var width: Int
        var byteOrder: ByteOrder
        var includesField: Bool
        var adjustment: Int
        var testDescription: String { "\(width) bytes \(byteOrder) includes field \(includesField) adjustment \(adjustment)" }
    }

    static let configurations: [Configuration] = [1, 2, 3, 4, 8].flatMap { width in
        [ByteOrder.bigEndian, .littleEndian].flatMap { order in
            [
                Configuration(width: width, byteOrder: order, includesField: false, adjustment: 0),
                Configuration(width: width, byteOrder: order, includesField: true, adjustment: 0),
                Configuration(width: width, byteOrder: order, includesField: false, adjustment: 3)
            ]
        }
    }

    @Test(arguments: configurations)
    func random_messages_round_trip_under_random_cuts(_ configuration: Configuration) {
        let encoder = LengthFieldPrepender(
            lengthFieldLength: configuration.width, byteOrder: configuration.byteOrder,
            lengthAdjustment: configuration.adjustment,
            lengthIncludesLengthFieldLength: configuration.includesField)
        let decoderAdjustment = -configuration.adjustment - (configuration.includesField ? configuration.width : 0)
        var random = SplitMix64(seed: UInt64(configuration.width * 31 + configuration.adjustment))
        let maxBody = configuration.width == 1 ? 200 : 600
        let messages = (0..<30).map { _ in Data(random.bytes(count: Int.random(in: 0...maxBody, using: &random))) }
        DecoderVerifier.verifyRoundTrip(
            encoder: encoder,
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 4096, lengthFieldLength: configuration.width,
                    byteOrder: configuration.byteOrder, lengthAdjustment: decoderAdjustment,
                    initialBytesToStrip: configuration.width)
            }, messages: messages, randomCuttings: 30)
    }

    @Test func a_huge_positive_adjustment_overflowing_int_is_an_invalid_length_field_not_a_trap() {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder(
                maxFrameLength: 64, lengthFieldLength: 8,
                lengthAdjustment: Int.max))
        reader.append(Data([0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(throws: FramingError.invalidLengthField(1)) { try reader.nextFrame() }
    }

    @Test func a_huge_negative_adjustment_is_an_invalid_length_field_not_a_trap() {
        var reader = FrameReader(
            decoder: LengthFieldBasedFrameDecoder(
                maxFrameLength: 64, lengthFieldLength: 4,
                lengthAdjustment: Int.min))
        reader.append(Data([0xFF, 0xFF, 0xFF, 0xFF]))
        #expect(throws: FramingError.invalidLengthField(4_294_967_295)) { try reader.nextFrame() }
    }

    @Test func every_width_reads_its_largest_value_as_too_long_without_buffering_it() {
        for width in [1, 2, 3, 4] {
            var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder(maxFrameLength: 16, lengthFieldLength: width))
            reader.append(Data(repeating: 0xFF, count: width))
            let length = Int((UInt64(1) << UInt64(8 * width)) - 1) + width
            #expect(throws: FramingError.frameTooLong(length: length, maxFrameLength: 16)) { try reader.nextFrame() }
            #expect(reader.bufferedBytes == 0)
        }
    }

    @Test func the_prepender_refuses_lengths_that_do_not_fit_or_overflow() {
        #expect(throws: FramingError.messageTooLong(length: 256, maxLength: 255)) {
            try LengthFieldPrepender(lengthFieldLength: 1).encode(Data(count: 256))
        }
        #expect(throws: FramingError.messageTooLong(length: 1, maxLength: Int.max)) {
            try LengthFieldPrepender(lengthFieldLength: 8, lengthAdjustment: Int.max).encode(Data(count: 1))
        }
    }
}
