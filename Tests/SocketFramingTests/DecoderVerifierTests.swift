import Foundation
import SocketFraming
import Testing
@testable import TestSupport

/// The shared verifier must catch decoders that only work when bytes arrive in one piece.
@Suite(.cpuBound) struct DecoderVerifierTests {
    /// Returns everything buffered as one frame: right only when each frame arrives in one read.
    struct WholeReadDecoder: FrameDecoder {
        var maximumFrameLength: Int { .max }
        mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
            buffer.readableBytes == 0 ? nil : buffer.readData(count: buffer.readableBytes)
        }
    }

    /// A 1-byte length prefix decoder that throws away a partial frame instead of waiting for the rest.
    struct ForgetfulDecoder: FrameDecoder {
        var maximumFrameLength: Int { 1 + Int(UInt8.max) }
        mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
            guard let length = buffer.getInteger(at: 0, as: UInt8.self) else { return nil }
            guard buffer.readableBytes >= 1 + Int(length) else {
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                return nil
            }
            buffer.moveReaderIndex(forwardBy: 1)
            return buffer.readData(count: Int(length))
        }
    }

    @Test func a_decoder_that_needs_whole_reads_is_caught() {
        withKnownIssue {
            DecoderVerifier.verify({ WholeReadDecoder() }, bytes: [1, 2, 3], expecting: [Data([1, 2, 3])])
        }
    }

    @Test func a_decoder_that_drops_partial_frames_is_caught() {
        withKnownIssue {
            DecoderVerifier.verify({ ForgetfulDecoder() }, bytes: [2, 0x61, 0x62], expecting: [Data(utf8("ab"))])
        }
    }

    /// A 1-byte length prefix decoder that claims a maximum of 3 bytes but waits for frames of up to 256:
    /// a socket reading with its maximum as the limit would refuse a 4-byte frame it accepts.
    struct UnderstatedMaximumDecoder: FrameDecoder {
        var maximumFrameLength: Int { 3 }
        mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> Data? {
            guard let length = buffer.getInteger(at: 0, as: UInt8.self),
                buffer.readableBytes >= 1 + Int(length)
            else { return nil }
            buffer.moveReaderIndex(forwardBy: 1)
            return buffer.readData(count: Int(length))
        }
    }

    @Test func a_decoder_that_waits_past_its_maximum_frame_length_is_caught() {
        #expect(
            DecoderVerifier.run(
                UnderstatedMaximumDecoder(), bytes: [3, 0x61, 0x62, 0x63], chunkSizes: [3, 1],
                expecting: [Data(utf8("abc"))])
                == "decode returned nil with 3 bytes readable, not under maximumFrameLength 3, after 3 bytes")
        withKnownIssue {
            DecoderVerifier.verify(
                { UnderstatedMaximumDecoder() }, bytes: [3, 0x61, 0x62, 0x63],
                expecting: [Data(utf8("abc"))])
        }
    }

    @Test func a_correct_decoder_passes_including_on_no_bytes() {
        DecoderVerifier.verify({ LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 64) }, bytes: [], expecting: [])
    }

    @Test func run_reports_what_went_wrong() {
        #expect(
            DecoderVerifier.run(ForgetfulDecoder(), bytes: [2, 0x61, 0x62], chunkSizes: [1, 2], expecting: [Data(utf8("ab"))])
                == "decode returned nil but changed the readable bytes from 1 to 0 after 1 bytes")
        #expect(
            DecoderVerifier.run(WholeReadDecoder(), bytes: [1, 2], chunkSizes: [1, 1], expecting: [Data([1, 2])])
                == "decoded 2 frames [1 bytes, 1 bytes], expected 1 frames [2 bytes]")
        #expect(
            DecoderVerifier.run(ForgetfulDecoder(), bytes: [1, 0x61, 5], chunkSizes: [3], expecting: [Data(utf8("a"))])
                == "decode returned nil but changed the readable bytes from 1 to 0 after 3 bytes")
    }

    @Test func random_chunk_sizes_add_up_and_repeat_for_a_seed() {
        var first = SplitMix64(seed: 9)
        var second = SplitMix64(seed: 9)
        for total in [1, 2, 17, 1000] {
            let sizes = DecoderVerifier.randomChunkSizes(total: total, using: &first)
            #expect(sizes.reduce(0, +) == total)
            #expect(sizes.allSatisfy { $0 >= 1 })
            #expect(DecoderVerifier.randomChunkSizes(total: total, using: &second) == sizes)
        }
        #expect(DecoderVerifier.randomChunkSizes(total: 0, using: &first) == [])
    }

    @Test func splitmix64_matches_the_reference_implementation() {
        var random = SplitMix64(seed: 0)
        #expect(
            [random.next(), random.next(), random.next()]
                == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }
}
