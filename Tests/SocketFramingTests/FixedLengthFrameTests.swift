import Foundation
import SocketFraming
import TestSupport
import Testing

/// `FixedLengthFrameDecoder` and `FixedLengthFrameEncoder` (MISSION.md M3.6).
@Suite(.cpuBound) struct FixedLengthFrameTests {
    @Test func the_type_documentation_example_decodes_as_drawn() throws {
        var reader = FrameReader(decoder: FixedLengthFrameDecoder(frameLength: 3))
        reader.append(Data(utf8("A")))
        #expect(try drain(&reader) == [])
        reader.append(Data(utf8("BCD")))
        #expect(try drain(&reader) == [Data(utf8("ABC"))])
        reader.append(Data(utf8("EFGHI")))
        #expect(try drain(&reader) == [Data(utf8("DEF")), Data(utf8("GHI"))])
        #expect(try reader.finish() == nil)
    }

    @Test func finishing_inside_a_frame_is_a_truncated_frame() throws {
        var reader = FrameReader(decoder: FixedLengthFrameDecoder(frameLength: 4))
        reader.append(Data(utf8("ABCDEF")))
        #expect(try reader.finish() == Data(utf8("ABCD")))
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 2)) { try reader.finish() }
    }

    @Test func the_encoder_writes_messages_as_they_are_and_refuses_other_lengths() throws {
        let encoder = FixedLengthFrameEncoder(frameLength: 3)
        #expect(try encoder.encode(Data(utf8("ABC"))) == Data(utf8("ABC")))
        #expect(throws: FramingError.wrongMessageLength(length: 2, expectedLength: 3)) { try encoder.encode(Data(utf8("AB"))) }
        #expect(throws: FramingError.wrongMessageLength(length: 4, expectedLength: 3)) { try encoder.encode(Data(utf8("ABCD"))) }
    }

    @Test(arguments: [1, 2, 7, 64])
    func random_messages_round_trip_under_random_cuts(frameLength: Int) {
        var random = SplitMix64(seed: UInt64(frameLength))
        let messages = (0..<40).map { _ in Data(random.bytes(count: frameLength)) }
        DecoderVerifier.verifyRoundTrip(
            encoder: FixedLengthFrameEncoder(frameLength: frameLength),
            { FixedLengthFrameDecoder(frameLength: frameLength) }, messages: messages,
            randomCuttings: 50)
    }
}
