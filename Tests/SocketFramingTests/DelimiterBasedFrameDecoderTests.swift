import Foundation
import SocketFraming
import TestSupport
import Testing

/// `DelimiterBasedFrameDecoder` and `DelimiterFrameEncoder` (MISSION.md M3.2), with Netty's semantics.
@Suite(.cpuBound) struct DelimiterBasedFrameDecoderTests {
    static let crlf = DelimiterBasedFrameDecoder.crlf

    func crlfDecoder(max: Int = 1024, strip: Bool = true, failFast: Bool = true) -> DelimiterBasedFrameDecoder {
        DelimiterBasedFrameDecoder(maxFrameLength: max, delimiter: Self.crlf, stripDelimiter: strip, failFast: failFast)
    }

    @Test func the_type_documentation_example_decodes_as_drawn() throws {
        var reader = FrameReader(decoder: crlfDecoder())
        reader.append(Data(utf8("hi\r")))
        #expect(try drain(&reader) == [])
        reader.append(Data(utf8("\n\r\nok\r\nb")))
        #expect(try drain(&reader) == [Data(utf8("hi")), Data(), Data(utf8("ok"))])
        reader.append(Data(utf8("ye\r\n")))
        #expect(try drain(&reader) == [Data(utf8("bye"))])
        #expect(try reader.finish() == nil)
    }

    @Test func crlf_frames_under_every_cutting() {
        DecoderVerifier.verify(
            { crlfDecoder() }, bytes: utf8("hi\r\n\r\nok\r\nbye\r\n"),
            expecting: [Data(utf8("hi")), Data(), Data(utf8("ok")), Data(utf8("bye"))])
    }

    @Test func lines_end_at_crlf_or_a_lone_lf() {
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder.lines(maxFrameLength: 64) },
            bytes: utf8(
                "a\r\nb\nc\r\n\n\r"
                    + "\n"), expecting: [Data(utf8("a")), Data(utf8("b")), Data(utf8("c")), Data(), Data()])
    }

    @Test func lines_keeping_the_delimiter_keep_whichever_ended_the_line() {
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder.lines(maxFrameLength: 64, stripDelimiter: false) },
            bytes: utf8("a\r\nb\n"), expecting: [Data(utf8("a\r\n")), Data(utf8("b\n"))])
    }

    @Test func any_byte_sequence_can_be_the_delimiter() {
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder(maxFrameLength: 64, delimiter: [0xFF, 0x00, 0xFF]) },
            bytes: [1, 0xFF, 0x00, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0xFF],
            expecting: [Data([1]), Data(), Data([0xFF])])
    }

    @Test func the_delimiter_that_starts_earliest_wins_whatever_the_list_order() {
        // "\n" is listed first but "\r\n" starts one byte earlier: the shorter frame wins, as in Netty.
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder(maxFrameLength: 64, delimiters: [[0x0A], Self.crlf]) },
            bytes: utf8("a\r\nb\n"), expecting: [Data(utf8("a")), Data(utf8("b"))])
    }

    @Test func delimiters_starting_at_the_same_byte_go_by_list_order() {
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder(maxFrameLength: 64, delimiters: [utf8("ab"), utf8("abc")]) },
            bytes: utf8("xabcyab"), expecting: [Data(utf8("x")), Data(utf8("cy"))])
        DecoderVerifier.verify(
            { DelimiterBasedFrameDecoder(maxFrameLength: 64, delimiters: [utf8("abc"), utf8("ab")]) },
            bytes: utf8("xabcyab"), expecting: [Data(utf8("x")), Data(utf8("y"))])
    }

    @Test func a_shorter_delimiter_waits_while_a_longer_one_listed_first_may_still_complete() throws {
        var reader = FrameReader(decoder: DelimiterBasedFrameDecoder(maxFrameLength: 64, delimiters: [utf8("abc"), utf8("ab")]))
        reader.append(Data(utf8("xab")))
        #expect(try reader.nextFrame() == nil)  // "abc" may still arrive
        #expect(reader.bufferedBytes == 3)
        reader.append(Data(utf8("c")))
        #expect(try drain(&reader) == [Data(utf8("x"))])
        reader.append(Data(utf8("yab")))
        #expect(try reader.nextFrame() == nil)
        #expect(try reader.finish() == Data(utf8("y")))  // the stream ended: "ab" it is
        #expect(try reader.finish() == nil)
    }

    @Test func a_frame_of_exactly_max_frame_length_is_accepted_even_with_half_its_delimiter_buffered() throws {
        // Netty's decoder counts the "\r" and fails here; the frame is 3 bytes, within the maximum.
        var reader = FrameReader(decoder: crlfDecoder(max: 3))
        reader.append(Data(utf8("abc\r")))
        #expect(try reader.nextFrame() == nil)
        reader.append(Data(utf8("\n")))
        #expect(try reader.nextFrame() == Data(utf8("abc")))
    }

    @Test func fail_fast_throws_once_more_than_max_bytes_precede_any_delimiter_then_resumes() throws {
        var reader = FrameReader(decoder: crlfDecoder(max: 3))
        reader.append(Data(utf8("abcd")))
        #expect(try reader.nextFrame() == nil)  // the 4th byte may begin the CRLF
        reader.append(Data(utf8("e")))
        #expect(throws: FramingError.frameTooLong(length: 4, maxFrameLength: 3)) { try reader.nextFrame() }
        #expect(reader.bufferedBytes == 1)  // "e" may begin the CRLF; the rest is gone
        reader.append(Data(utf8("fgh")))
        #expect(try reader.nextFrame() == nil)
        #expect(reader.bufferedBytes == 1)
        reader.append(Data(utf8("\r\nok\r\n")))
        #expect(try drain(&reader) == [Data(utf8("ok"))])
    }

    @Test func without_fail_fast_the_error_comes_with_the_delimiter_and_the_full_length() throws {
        var reader = FrameReader(decoder: crlfDecoder(max: 3, failFast: false))
        reader.append(Data(utf8("abcde")))
        #expect(try reader.nextFrame() == nil)
        reader.append(Data(utf8("f\r")))
        #expect(try reader.nextFrame() == nil)
        reader.append(Data(utf8("\nok\r\n")))
        #expect(throws: FramingError.frameTooLong(length: 6, maxFrameLength: 3)) { try reader.nextFrame() }
        #expect(try drain(&reader) == [Data(utf8("ok"))])
    }

    @Test(arguments: [true, false])
    func a_too_long_frame_whose_delimiter_is_buffered_throws_at_once(failFast: Bool) throws {
        var reader = FrameReader(decoder: crlfDecoder(max: 3, failFast: failFast))
        reader.append(Data(utf8("abcdef\r\nok\r\n")))
        #expect(throws: FramingError.frameTooLong(length: 6, maxFrameLength: 3)) { try reader.nextFrame() }
        #expect(try drain(&reader) == [Data(utf8("ok"))])
    }

    @Test func without_fail_fast_a_stream_ending_inside_a_too_long_frame_throws_frame_too_long() throws {
        var reader = FrameReader(decoder: crlfDecoder(max: 3, failFast: false))
        reader.append(Data(utf8("abcdefg")))
        #expect(try reader.nextFrame() == nil)
        #expect(throws: FramingError.frameTooLong(length: 7, maxFrameLength: 3)) { try reader.finish() }
    }

    @Test func finishing_with_bytes_and_no_delimiter_is_a_truncated_frame() throws {
        var reader = FrameReader(decoder: crlfDecoder())
        reader.append(Data(utf8("ok\r\nhalf\r")))
        #expect(try reader.finish() == Data(utf8("ok")))
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 5)) { try reader.finish() }
    }

    @Test func max_frame_length_zero_allows_only_empty_frames() {
        var reader = FrameReader(decoder: crlfDecoder(max: 0))
        reader.append(Data(utf8("\r\n\r\nx\r\n")))
        #expect(throws: FramingError.frameTooLong(length: 1, maxFrameLength: 0)) { try drain(&reader) }
    }

    @Test func buffered_bytes_never_exceed_max_frame_length_plus_the_longest_delimiter() throws {
        var reader = FrameReader(decoder: DelimiterBasedFrameDecoder.lines(maxFrameLength: 100))
        var random = SplitMix64(seed: 11)
        for _ in 0..<500 {
            reader.append(Data(random.bytes(count: Int.random(in: 0...40, using: &random), from: [0x61, 0x0D])))
            do { _ = try drain(&reader) } catch {}
            #expect(reader.bufferedBytes <= 100 + 2)
        }
    }

    @Test func decoding_is_linear_a_quarter_megabyte_frame_fed_one_byte_at_a_time() throws {
        // Re-scanning from the front on every byte would examine some 3 * 10^10 bytes here.
        let frameLength = 256 * 1024
        var decoder = DelimiterBasedFrameDecoder.lines(maxFrameLength: frameLength)
        var buffer = FrameBuffer()
        var byte: [UInt8] = [0x61]
        for _ in 0..<frameLength {
            buffer.append(contentsOf: byte)
            #expect(try decoder.decode(&buffer) == nil)
        }
        byte = [0x0D, 0x0A]
        buffer.append(contentsOf: byte)
        #expect(try decoder.decode(&buffer)?.count == frameLength)
    }

    @Test func random_messages_round_trip_through_the_encoder_under_random_cuts() {
        var random = SplitMix64(seed: 0xDE11)
        for round in 0..<20 {
            let messages = (0..<Int.random(in: 0...30, using: &random)).map { _ in
                Data(random.bytes(count: Int.random(in: 0...80, using: &random), from: [0x61, 0x0D, 0x62, 0x0A, 0x00]))
            }.filter { !$0.contains(0x0A) }
            DecoderVerifier.verifyRoundTrip(
                encoder: DelimiterFrameEncoder(delimiter: Self.crlf), { DelimiterBasedFrameDecoder.lines(maxFrameLength: 80) },
                messages: messages, randomCuttings: 50, seed: UInt64(round))
        }
    }

    /// Frames as Netty cuts a whole stream: at the earliest-starting delimiter, the first listed on a tie.
    static func referenceFrames(_ stream: [UInt8], delimiters: [[UInt8]]) -> (frames: [Data], rest: Int) {
        var frames: [Data] = []
        var start = 0
        search: while start < stream.count {
            for index in start..<stream.count {
                for delimiter in delimiters where stream[index...].starts(with: delimiter) {
                    frames.append(Data(stream[start..<index]))
                    start = index + delimiter.count
                    continue search
                }
            }
            break
        }
        return (frames, stream.count - start)
    }

    @Test func overlapping_delimiters_cut_random_streams_as_netty_cuts_them_whole() {
        let delimiterSets: [[[UInt8]]] = [
            [utf8("abc"), utf8("ab")], [utf8("ab"), utf8("abc")], [utf8("ba"), utf8("aab"), utf8("c")],
            [utf8("aaa"), utf8("aa")], [utf8("abab")]
        ]
        var random = SplitMix64(seed: 0x0DE1)
        for (setIndex, delimiters) in delimiterSets.enumerated() {
            for round in 0..<15 {
                var stream = random.bytes(count: Int.random(in: 0...120, using: &random), from: utf8("abcx"))
                if Self.referenceFrames(stream, delimiters: delimiters).rest > 0 {
                    // "x" is in no delimiter, so the first delimiter after it ends the last frame exactly.
                    stream += utf8("x") + delimiters[0]
                }
                let reference = Self.referenceFrames(stream, delimiters: delimiters)
                #expect(reference.rest == 0)
                DecoderVerifier.verify(
                    { DelimiterBasedFrameDecoder(maxFrameLength: 200, delimiters: delimiters) },
                    bytes: stream, expecting: reference.frames, randomCuttings: 30,
                    seed: UInt64(setIndex * 100 + round))
            }
        }
    }

    @Test func the_encoder_writes_the_documentation_example() throws {
        let encoder = DelimiterFrameEncoder(delimiter: Self.crlf)
        var out = Data()
        for message in ["hi", "", "ok"] { try encoder.encode(Data(utf8(message)), into: &out) }
        #expect([UInt8](out) == [0x68, 0x69, 0x0D, 0x0A, 0x0D, 0x0A, 0x6F, 0x6B, 0x0D, 0x0A])
    }

    @Test func the_encoder_refuses_a_message_holding_the_delimiter() {
        let encoder = DelimiterFrameEncoder(delimiter: Self.crlf)
        #expect(throws: FramingError.messageContainsDelimiter(offset: 3)) { try encoder.encode(Data(utf8("abc\r\nd"))) }
        #expect(throws: Never.self) { try encoder.encode(Data(utf8("a\r"))) }  // "a\r\r\n" still cuts at "a\r"
    }

    @Test func the_encoder_refuses_a_message_that_the_delimiter_would_complete_early() {
        let encoder = DelimiterFrameEncoder(delimiter: utf8("--"))
        #expect(throws: FramingError.messageContainsDelimiter(offset: 1)) { try encoder.encode(Data(utf8("a-"))) }
    }
}
