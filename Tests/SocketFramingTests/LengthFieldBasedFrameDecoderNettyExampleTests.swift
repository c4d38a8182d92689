import Foundation
import SocketFraming
import TestSupport
import Testing

/// The seven examples of Netty's `LengthFieldBasedFrameDecoder` javadoc, byte for byte.
@Suite(.cpuBound) struct LengthFieldBasedFrameDecoderNettyExampleTests {
    static let content = utf8("HELLO, WORLD")  // 12 bytes

    /// Decodes `wire` alone, then two copies of it glued together cut every way.
    func expectDecodes(
        _ makeDecoder: () -> LengthFieldBasedFrameDecoder, _ wire: [UInt8], into frame: [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var decoder = makeDecoder()
        var buffer = FrameBuffer()
        buffer.append(contentsOf: wire)
        #expect(try decoder.decode(&buffer) == Data(frame), sourceLocation: sourceLocation)
        #expect(buffer.readableBytes == 0, sourceLocation: sourceLocation)
        DecoderVerifier.verify(
            makeDecoder, bytes: wire + wire, expecting: [Data(frame), Data(frame)],
            sourceLocation: sourceLocation)
    }

    @Test func two_byte_length_field_at_offset_0_do_not_strip_header() throws {
        let wire: [UInt8] = [0x00, 0x0C] + Self.content  // 14 bytes
        try expectDecodes(
            { LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldOffset: 0, lengthFieldLength: 2) },
            wire, into: wire)
    }

    @Test func two_byte_length_field_at_offset_0_strip_header() throws {
        let wire: [UInt8] = [0x00, 0x0C] + Self.content
        try expectDecodes(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 0, lengthFieldLength: 2,
                    initialBytesToStrip: 2)
            }, wire, into: Self.content)
    }

    @Test func two_byte_length_field_at_offset_0_do_not_strip_header_length_of_whole_message() throws {
        let wire: [UInt8] = [0x00, 0x0E] + Self.content
        try expectDecodes(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 0, lengthFieldLength: 2,
                    lengthAdjustment: -2)
            }, wire, into: wire)
    }

    @Test func three_byte_length_field_at_the_end_of_five_byte_header_do_not_strip_header() throws {
        let wire: [UInt8] = [0xCA, 0xFE, 0x00, 0x00, 0x0C] + Self.content  // 17 bytes
        try expectDecodes(
            { LengthFieldBasedFrameDecoder(maxFrameLength: 1024, lengthFieldOffset: 2, lengthFieldLength: 3) },
            wire, into: wire)
    }

    @Test func three_byte_length_field_at_the_beginning_of_five_byte_header_do_not_strip_header() throws {
        let wire: [UInt8] = [0x00, 0x00, 0x0C, 0xCA, 0xFE] + Self.content
        try expectDecodes(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 0, lengthFieldLength: 3,
                    lengthAdjustment: 2)
            }, wire, into: wire)
    }

    @Test func two_byte_length_field_at_offset_1_in_four_byte_header_strip_first_field_and_length() throws {
        let wire: [UInt8] = [0xCA, 0x00, 0x0C, 0xFE] + Self.content  // 16 bytes
        try expectDecodes(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 1, lengthFieldLength: 2,
                    lengthAdjustment: 1, initialBytesToStrip: 3)
            }, wire, into: [0xFE] + Self.content)  // 13 bytes
    }

    @Test func two_byte_length_field_at_offset_1_in_four_byte_header_strip_first_field_and_length_whole_message() throws {
        let wire: [UInt8] = [0xCA, 0x00, 0x10, 0xFE] + Self.content
        try expectDecodes(
            {
                LengthFieldBasedFrameDecoder(
                    maxFrameLength: 1024, lengthFieldOffset: 1, lengthFieldLength: 2,
                    lengthAdjustment: -3, initialBytesToStrip: 3)
            }, wire, into: [0xFE] + Self.content)
    }
}
