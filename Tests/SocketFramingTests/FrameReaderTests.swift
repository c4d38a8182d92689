import Foundation
import SocketFraming
import TestSupport
import Testing

@Suite(.cpuBound) struct FrameReaderTests {
    @Test func buffered_bytes_count_what_is_not_yet_a_frame() throws {
        var reader = FrameReader(decoder: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 64))
        #expect(reader.bufferedBytes == 0)
        [UInt8]([0, 0, 0, 1, 0x61, 0, 0]).withUnsafeBytes { reader.append($0) }
        #expect(reader.bufferedBytes == 7)
        #expect(try reader.nextFrame() == Data(utf8("a")))
        #expect(reader.bufferedBytes == 2)
        #expect(try reader.nextFrame() == nil)
        #expect(reader.bufferedBytes == 2)
    }

    @Test func finish_on_an_empty_stream_is_nil() throws {
        var reader = FrameReader(decoder: SevenByteHeaderFrameDecoder())
        #expect(try reader.finish() == nil)
    }

    @Test func finish_with_a_partial_header_is_a_truncated_frame() {
        var reader = FrameReader(decoder: SevenByteHeaderFrameDecoder())
        reader.append(Data([0x00, 0x01, 0x00]))
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 3)) { try reader.finish() }
    }

    @Test func encode_returns_the_bytes_encode_into_appends() throws {
        let encoder = LengthFieldPrepender(lengthFieldLength: 4)
        var out = Data([0xFF])
        try encoder.encode(Data(utf8("a")), into: &out)
        #expect(try encoder.encode(Data(utf8("a"))) == Data([0, 0, 0, 1, 0x61]))
        #expect(out == Data([0xFF, 0, 0, 0, 1, 0x61]))
    }

    @Test func errors_describe_themselves_with_their_numbers() {
        #expect(
            FramingError.frameTooLong(length: 15, maxFrameLength: 14).description
                == "frame of 15 bytes exceeds the maximum frame length of 14 bytes")
        #expect(FramingError.invalidLengthField(-1).description == "invalid length field value -1")
        #expect(FramingError.malformedHeader("x").description == "malformed header: x")
        #expect(FramingError.decompressionFailed("y").description == "decompression failed: y")
        #expect(
            FramingError.decompressedTooLarge(maxBytes: 8).description
                == "decompressed data exceeds the maximum of 8 bytes")
        #expect(
            FramingError.truncatedFrame(bufferedBytes: 6).description
                == "stream ended in the middle of a frame, 6 bytes of it buffered")
        #expect(
            FramingError.messageTooLong(length: 256, maxLength: 255).description
                == "message length 256 exceeds the length field's maximum of 255")
    }
}
