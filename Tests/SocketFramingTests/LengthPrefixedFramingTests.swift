import Foundation
import SocketFraming
import TestSupport
import Testing

/// The articles' 4-byte big-endian length prefix (M3.1) against sticky and half packets.
@Suite(.cpuBound) struct LengthPrefixedFramingTests {
    static func makeDecoder() -> LengthFieldBasedFrameDecoder { .lengthPrefixed(maxFrameLength: 1024) }
    static func makeReader() -> FrameReader<LengthFieldBasedFrameDecoder> { FrameReader(decoder: makeDecoder()) }

    static let hello: [UInt8] = [0x00, 0x00, 0x00, 0x05] + utf8("hello")
    static let hi: [UInt8] = [0x00, 0x00, 0x00, 0x02] + utf8("hi")
    static let empty: [UInt8] = [0x00, 0x00, 0x00, 0x00]

    @Test func two_frames_in_one_read() throws {
        var reader = Self.makeReader()
        reader.append(Data(Self.hello + Self.hi))
        #expect(try drain(&reader) == [Data(utf8("hello")), Data(utf8("hi"))])
        #expect(reader.bufferedBytes == 0)
    }

    @Test func a_frame_split_at_every_possible_byte() throws {
        for cut in 1..<Self.hello.count {
            var reader = Self.makeReader()
            reader.append(Data(Self.hello[..<cut]))
            #expect(try reader.nextFrame() == nil, "cut at \(cut)")
            #expect(reader.bufferedBytes == cut)
            reader.append(Data(Self.hello[cut...]))
            #expect(try drain(&reader) == [Data(utf8("hello"))], "cut at \(cut)")
            #expect(reader.bufferedBytes == 0)
        }
    }

    @Test func a_frames_tail_glued_to_the_next_frames_head() throws {
        var reader = Self.makeReader()
        reader.append(Data(Self.hello[..<6]))  // length and "h"
        #expect(try drain(&reader) == [])
        reader.append(Data(Self.hello[6...] + Self.hi[..<2]))  // "ello", then half of the next length
        #expect(try drain(&reader) == [Data(utf8("hello"))])
        #expect(reader.bufferedBytes == 2)
        reader.append(Data(Self.hi[2...]))
        #expect(try drain(&reader) == [Data(utf8("hi"))])
        #expect(reader.bufferedBytes == 0)
    }

    @Test func one_byte_at_a_time() throws {
        var reader = Self.makeReader()
        var frames: [Data] = []
        for byte in Self.hello + Self.hi {
            reader.append(Data([byte]))
            frames += try drain(&reader)
        }
        #expect(frames == [Data(utf8("hello")), Data(utf8("hi"))])
        #expect(reader.bufferedBytes == 0)
    }

    @Test func the_type_documentation_example_decodes_as_drawn() throws {
        var reader = Self.makeReader()
        reader.append(Data([0x00, 0x00, 0x00, 0x05, 0x68, 0x65]))
        #expect(try drain(&reader) == [])
        reader.append(Data([0x6C, 0x6C, 0x6F, 0x00, 0x00, 0x00, 0x02, 0x68, 0x69, 0x00]))
        #expect(try drain(&reader) == [Data(utf8("hello")), Data(utf8("hi"))])
        reader.append(Data([0x00, 0x00, 0x00]))
        #expect(try drain(&reader) == [Data()])
    }

    @Test func all_at_once_one_byte_at_a_time_every_cut_and_random_cuts_give_the_same_frames() {
        DecoderVerifier.verify(
            Self.makeDecoder, bytes: Self.hello + Self.empty + Self.hi + Self.empty,
            expecting: [Data(utf8("hello")), Data(), Data(utf8("hi")), Data()])
    }

    @Test func many_frames_of_many_sizes_decode_under_random_cuts() {
        var random = SplitMix64(seed: 42)
        var wire: [UInt8] = []
        var frames: [Data] = []
        for _ in 0..<200 {
            let body = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            wire += [0, 0, 0, UInt8(body.count)] + body
            frames.append(Data(body))
        }
        DecoderVerifier.verify(Self.makeDecoder, bytes: wire, expecting: frames, randomCuttings: 50)
    }

    @Test func empty_body_frames_decode_to_empty_data() throws {
        var reader = Self.makeReader()
        reader.append(Data(Self.empty + Self.empty))
        #expect(try drain(&reader) == [Data(), Data()])
    }

    @Test func a_frame_of_exactly_max_frame_length_is_accepted() throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 14))
        reader.append(Data([0, 0, 0, 10] + Array(repeating: 0xAB, count: 10)))  // 4 + 10 = 14 bytes
        #expect(try reader.nextFrame() == Data(repeating: 0xAB, count: 10))
    }

    @Test func a_frame_one_byte_over_max_frame_length_is_rejected_when_its_length_arrives() {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 14))
        reader.append(Data([0, 0, 0, 11]))
        #expect(throws: FramingError.frameTooLong(length: 15, maxFrameLength: 14)) { try reader.nextFrame() }
    }

    @Test func a_length_claiming_4_GB_fails_at_once_and_buffers_nothing() throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20))
        reader.append(Data([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3]))
        #expect(throws: FramingError.frameTooLong(length: 4_294_967_299, maxFrameLength: 1 << 20)) {
            try reader.nextFrame()
        }
        #expect(reader.bufferedBytes == 0)
        reader.append(Data(repeating: 0, count: 1000))  // more of the 4 GB frame: discarded as it arrives
        #expect(try reader.nextFrame() == nil)
        #expect(reader.bufferedBytes == 0)
    }

    @Test func finishing_with_half_a_frame_is_a_truncated_frame_with_the_bytes_buffered() throws {
        var reader = Self.makeReader()
        reader.append(Data(Self.hi + Self.hello[..<6]))
        #expect(try reader.finish() == Data(utf8("hi")))
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 6)) { try reader.finish() }
    }

    @Test func finishing_on_a_frame_boundary_gives_the_last_frames_then_nil() throws {
        var reader = Self.makeReader()
        reader.append(Data(Self.hi + Self.empty))
        #expect(try reader.finish() == Data(utf8("hi")))
        #expect(try reader.finish() == Data())
        #expect(try reader.finish() == nil)
    }

    @Test func frames_before_a_bad_frame_are_all_delivered_first() throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 64))
        reader.append(Data(Self.hello + Self.hi + [0x00, 0x01, 0x00, 0x00] + Self.hi))
        #expect(try reader.nextFrame() == Data(utf8("hello")))
        #expect(try reader.nextFrame() == Data(utf8("hi")))
        #expect(throws: FramingError.frameTooLong(length: 65_540, maxFrameLength: 64)) { try reader.nextFrame() }
    }
}
