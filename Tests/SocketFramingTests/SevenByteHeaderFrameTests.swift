import Foundation
import SocketFraming
import TestSupport
import Testing

/// The seven-byte header of source article 003 (M3.4): version, function code, compressed flag, body length.
@Suite(.cpuBound) struct SevenByteHeaderFrameTests {
    /// A decoder accepting versions 1 and 2: the frames below are of both.
    static func makeDecoder() -> SevenByteHeaderFrameDecoder { SevenByteHeaderFrameDecoder(acceptedVersions: [1, 2]) }

    static let json = Data(utf8(#"{"from":"alice","to":"bob","text":"hi bob, hi bob, hi bob"}"#))  // 59 bytes
    /// `zlib.compress(json)` in Python (48 bytes).
    static let compressedJSON: [UInt8] = [
        0x78, 0x9C, 0xAB, 0x56, 0x4A, 0x2B, 0xCA, 0xCF, 0x55, 0xB2, 0x52, 0x4A, 0xCC, 0xC9, 0x4C, 0x4E, 0x55, 0xD2,
        0x51, 0x2A, 0xC9, 0x07, 0x72, 0x92, 0xF2, 0x93, 0x40, 0xCC, 0xD4, 0x8A, 0x12, 0x20, 0x27, 0x23, 0x53, 0x01,
        0xC8, 0xD7, 0x51, 0x40, 0xA5, 0x95, 0x6A, 0x01, 0x21, 0x21, 0x12, 0x28
    ]
    /// Version 2, function code 0x0102, compressed, 48 bytes of body.
    static let compressedWire: [UInt8] = [0x00, 0x02, 0x01, 0x02, 0x01, 0x00, 0x30] + compressedJSON
    static let compressedFrame = SevenByteHeaderFrame(version: 2, functionCode: 0x0102, isCompressed: true, body: json)
    /// Version 1, function code 10, plain "hi".
    static let plainWire: [UInt8] = [0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x02, 0x68, 0x69]
    static let plainFrame = SevenByteHeaderFrame(version: 1, functionCode: 10, body: Data(utf8("hi")))
    /// Version 1, function code 11, plain, empty.
    static let emptyWire: [UInt8] = [0x00, 0x01, 0x00, 0x0B, 0x00, 0x00, 0x00]
    static let emptyFrame = SevenByteHeaderFrame(version: 1, functionCode: 11, body: Data())

    func decodeAll(
        _ bytes: [UInt8], _ decoder: SevenByteHeaderFrameDecoder = makeDecoder()
    )
        throws(FramingError) -> [SevenByteHeaderFrame]
    {
        var reader = FrameReader(decoder: decoder)
        reader.append(Data(bytes))
        return try drain(&reader)
    }

    @Test func header_length_is_seven() {
        #expect(SevenByteHeaderFrame.headerLength == 7)
    }

    @Test func a_plain_frame_decodes_with_every_header_field_big_endian() throws {
        let wire: [UInt8] = [0x12, 0x34, 0xAB, 0xCD, 0x00, 0x00, 0x03, 0x61, 0x62, 0x63]
        #expect(
            try decodeAll(wire, SevenByteHeaderFrameDecoder(acceptedVersions: [0x1234]))
                == [SevenByteHeaderFrame(version: 0x1234, functionCode: 0xABCD, body: Data(utf8("abc")))])
    }

    @Test func a_compressed_frame_decodes_to_the_plain_body() throws {
        #expect(try decodeAll(Self.compressedWire) == [Self.compressedFrame])
    }

    @Test func the_decoder_documentation_example_decodes_as_drawn() throws {
        var reader = FrameReader(decoder: Self.makeDecoder())
        reader.append(Data([0x00, 0x01, 0x00, 0x0A, 0x00, 0x00]))
        #expect(try drain(&reader) == [])
        reader.append(Data([0x02, 0x68, 0x69, 0x00, 0x01, 0x00, 0x0B, 0x00, 0x00]))
        #expect(try drain(&reader) == [Self.plainFrame])
        reader.append(Data([0x00]))
        #expect(try drain(&reader) == [Self.emptyFrame])
    }

    @Test func two_frames_in_one_read() throws {
        #expect(try decodeAll(Self.compressedWire + Self.plainWire) == [Self.compressedFrame, Self.plainFrame])
    }

    @Test func a_compressed_frame_split_at_every_possible_byte() throws {
        for cut in 1..<Self.compressedWire.count {
            var reader = FrameReader(decoder: Self.makeDecoder())
            reader.append(Data(Self.compressedWire[..<cut]))
            #expect(try reader.nextFrame() == nil, "cut at \(cut)")
            #expect(reader.bufferedBytes == cut)
            reader.append(Data(Self.compressedWire[cut...]))
            #expect(try drain(&reader) == [Self.compressedFrame], "cut at \(cut)")
            #expect(reader.bufferedBytes == 0)
        }
    }

    @Test func a_frames_tail_glued_to_the_next_frames_head() throws {
        var reader = FrameReader(decoder: Self.makeDecoder())
        reader.append(Data(Self.plainWire.prefix(8)))  // header and "h"
        #expect(try drain(&reader) == [])
        reader.append(Data(Self.plainWire.suffix(1) + Self.compressedWire.prefix(5)))  // "i", then half a header
        #expect(try drain(&reader) == [Self.plainFrame])
        #expect(reader.bufferedBytes == 5)
        reader.append(Data(Self.compressedWire.dropFirst(5)))
        #expect(try drain(&reader) == [Self.compressedFrame])
        #expect(reader.bufferedBytes == 0)
    }

    @Test func plain_compressed_and_empty_frames_mixed_decode_under_every_cutting() {
        DecoderVerifier.verify(
            Self.makeDecoder,
            bytes: Self.plainWire + Self.compressedWire + Self.emptyWire + Self.compressedWire + Self.plainWire,
            expecting: [Self.plainFrame, Self.compressedFrame, Self.emptyFrame, Self.compressedFrame, Self.plainFrame])
    }

    @Test func many_random_frames_round_trip_through_encoder_and_decoder_under_random_cuts() throws {
        var random = SplitMix64(seed: 11)
        var frames: [SevenByteHeaderFrame] = []
        for _ in 0..<100 {
            let text = String(repeating: "ab", count: Int.random(in: 0...100, using: &random))
            frames.append(
                SevenByteHeaderFrame(
                    version: UInt16.random(in: 0...UInt16.max, using: &random),
                    functionCode: UInt16.random(in: 0...UInt16.max, using: &random),
                    isCompressed: Bool.random(using: &random), body: Data(utf8(text))))
        }
        var wire = Data()
        for frame in frames { try SevenByteHeaderFrameEncoder().encode(frame, into: &wire) }
        DecoderVerifier.verify(
            { SevenByteHeaderFrameDecoder(acceptedVersions: nil) }, bytes: Array(wire), expecting: frames,
            randomCuttings: 50)
    }

    @Test func a_body_of_65535_bytes_fits_the_length_field() throws {
        let body = Data(repeating: 0x41, count: 65_535)
        let wire = try SevenByteHeaderFrameEncoder().encode(SevenByteHeaderFrame(version: 1, functionCode: 1, body: body))
        #expect(Array(wire.prefix(7)) == [0x00, 0x01, 0x00, 0x01, 0x00, 0xFF, 0xFF])
        #expect(try decodeAll(Array(wire)) == [SevenByteHeaderFrame(version: 1, functionCode: 1, body: body)])
    }

    @Test func a_compressed_flag_of_2_is_a_malformed_header_as_soon_as_the_header_arrives() {
        #expect(throws: FramingError.malformedHeader("compressed flag is 2, expected 0 or 1")) {
            try decodeAll([0x00, 0x01, 0x00, 0x0A, 0x02, 0x00, 0x05])
        }
    }

    @Test func a_corrupt_compressed_body_is_a_decompression_failure() {
        var wire = Self.compressedWire
        wire[7] = 0x00  // the zlib header's first byte
        #expect(throws: FramingError.decompressionFailed("inflate: incorrect header check (Z_DATA_ERROR -3)")) {
            try decodeAll(wire)
        }
    }

    @Test func a_compression_bomb_is_stopped_at_max_decompressed_body_length() throws {
        let bomb = try Zlib.compress(Data(count: 10 << 20), level: 9)  // 10 MB of zeros
        let wire: [UInt8] = [0x00, 0x01, 0x00, 0x01, 0x01, UInt8(bomb.count >> 8), UInt8(bomb.count & 0xFF)] + bomb
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 1 << 20)) { try decodeAll(wire) }
    }

    @Test func a_compressed_body_of_exactly_the_maximum_decompresses_and_one_byte_more_does_not() throws {
        let decoder = SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: 59, acceptedVersions: [2])
        #expect(try decodeAll(Self.compressedWire, decoder) == [Self.compressedFrame])
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 58)) {
            try decodeAll(Self.compressedWire, SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: 58, acceptedVersions: [2]))
        }
    }

    @Test func finishing_with_half_a_frame_is_a_truncated_frame_with_the_bytes_buffered() throws {
        var reader = FrameReader(decoder: Self.makeDecoder())
        reader.append(Data(Self.plainWire + Self.compressedWire.prefix(20)))
        #expect(try reader.finish() == Self.plainFrame)
        #expect(throws: FramingError.truncatedFrame(bufferedBytes: 20)) { try reader.finish() }
    }

    @Test func frames_before_a_bad_frame_are_all_delivered_first() throws {
        var reader = FrameReader(decoder: Self.makeDecoder())
        reader.append(Data(Self.plainWire + Self.compressedWire + [0x00, 0x01, 0x00, 0x0A, 0x07, 0x00, 0x00]))
        #expect(try reader.nextFrame() == Self.plainFrame)
        #expect(try reader.nextFrame() == Self.compressedFrame)
        #expect(throws: FramingError.malformedHeader("compressed flag is 7, expected 0 or 1")) { try reader.nextFrame() }
    }

    @Test func the_encoder_writes_a_plain_frame_and_the_documentation_example() throws {
        let encoder = SevenByteHeaderFrameEncoder()
        var out = Data()
        try encoder.encode(Self.plainFrame, into: &out)
        try encoder.encode(SevenByteHeaderFrame(version: 1, functionCode: 10, body: Data()), into: &out)
        #expect(
            out
                == Data([
                    0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x02, 0x68, 0x69,
                    0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x00
                ]))
    }

    @Test func the_encoder_compresses_and_writes_the_compressed_length() throws {
        #expect(try SevenByteHeaderFrameEncoder().encode(Self.compressedFrame) == Data(Self.compressedWire))
    }

    @Test func a_large_compressible_body_fits_once_compressed() throws {
        let frame = SevenByteHeaderFrame(version: 1, functionCode: 2, isCompressed: true, body: Data(count: 1 << 20))
        let wire = try SevenByteHeaderFrameEncoder().encode(frame)
        #expect(wire.count < 7 + 2_000)
        #expect(try decodeAll(Array(wire)) == [frame])
    }

    @Test func a_plain_body_over_65535_bytes_is_too_long() {
        var out = Data([0xEE])
        #expect(throws: FramingError.messageTooLong(length: 65_536, maxLength: 65_535)) {
            try SevenByteHeaderFrameEncoder().encode(
                SevenByteHeaderFrame(version: 1, functionCode: 1, body: Data(count: 65_536)), into: &out)
        }
        #expect(out == Data([0xEE]))
    }

    @Test func an_incompressible_body_over_65535_bytes_once_compressed_is_too_long() throws {
        var random = SplitMix64(seed: 5)
        let body = Data((0..<65_530).map { _ in UInt8(truncatingIfNeeded: random.next()) })  // fits plain
        let compressedLength = try Zlib.compress(body).count
        #expect(compressedLength > 65_535)
        #expect(throws: FramingError.messageTooLong(length: compressedLength, maxLength: 65_535)) {
            try SevenByteHeaderFrameEncoder().encode(
                SevenByteHeaderFrame(version: 1, functionCode: 1, isCompressed: true, body: body))
        }
    }

    @Test func gzip_bodies_round_trip_when_both_sides_say_gzip() throws {
        let frame = SevenByteHeaderFrame(version: 3, functionCode: 4, isCompressed: true, body: Self.json)
        let wire = try SevenByteHeaderFrameEncoder(compressionFormat: .gzip).encode(frame)
        #expect(Array(wire.dropFirst(7).prefix(3)) == [0x1F, 0x8B, 0x08])  // RFC 1952 magic and deflate method
        #expect(try decodeAll(Array(wire), SevenByteHeaderFrameDecoder(compressionFormat: .gzip, acceptedVersions: [3])) == [frame])
    }

    @Test func an_encrypted_body_is_compressed_first_and_its_length_is_the_encrypted_length() throws {
        let cipher = TestCipher(key: 0x5A)
        let frame = SevenByteHeaderFrame(version: 2, functionCode: 0x0102, isCompressed: true, body: Self.json)
        let wire = try SevenByteHeaderFrameEncoder(transform: cipher).encode(frame)
        let encrypted = try cipher.encode(Data(Self.compressedJSON))  // 49 bytes
        #expect([UInt8](wire) == [0x00, 0x02, 0x01, 0x02, 0x01, 0x00, 0x31] + [UInt8](encrypted))
        #expect(try decodeAll([UInt8](wire), SevenByteHeaderFrameDecoder(transform: cipher, acceptedVersions: [2])) == [frame])
    }

    @Test func a_plain_body_can_be_encrypted_too() throws {
        let cipher = TestCipher(key: 0x5A)
        let wire = try SevenByteHeaderFrameEncoder(transform: cipher).encode(Self.plainFrame)
        #expect([UInt8](wire) == [0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x03, 0x32, 0x33, 0xA4])
        #expect(throws: FramingError.transformFailed("checksum 0xA4, expected 0xA5")) {
            try decodeAll([UInt8](wire), SevenByteHeaderFrameDecoder(transform: TestCipher(key: 0x5B)))
        }
    }

    @Test func random_frames_round_trip_with_a_cipher_under_random_cuts() {
        var random = SplitMix64(seed: 0x7B)
        let messages = (0..<25).map { _ in
            SevenByteHeaderFrame(
                version: UInt16.random(in: 0...3, using: &random),
                functionCode: UInt16.random(in: 0...UInt16.max, using: &random),
                isCompressed: Bool.random(using: &random),
                body: Data(random.bytes(count: Int.random(in: 0...150, using: &random), from: [0x7B, 0x22, 0x61])))
        }
        let cipher = TestCipher(key: 0xC3)
        DecoderVerifier.verifyRoundTrip(
            encoder: SevenByteHeaderFrameEncoder(transform: cipher),
            { SevenByteHeaderFrameDecoder(transform: cipher, acceptedVersions: [0, 1, 2, 3]) },
            messages: messages,
            randomCuttings: 40)
    }

    // MARK: - Header validation (issue 9: a desynchronised stream)

    /// Version 1, function code 2, plain, body `{}`: with two junk bytes `11 12` before it, its header
    /// reads as version 0x1112, function code 0x0001, flag 0, body length 0x0200 = 512.
    static let functionCode2Wire: [UInt8] = [0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x02, 0x7B, 0x7D]

    @Test func the_default_accepts_version_1_only() {
        #expect(SevenByteHeaderFrameDecoder.defaultAcceptedVersions == [1])
        #expect(SevenByteHeaderFrameDecoder().acceptedVersions == [1])
        #expect(SevenByteHeaderFrameDecoder().isKnownFunctionCode == nil)
        #expect(throws: FramingError.unsupportedVersion(2)) { try decodeAll(Self.compressedWire, SevenByteHeaderFrameDecoder()) }
    }

    @Test func two_junk_bytes_before_a_frame_fail_as_soon_as_seven_header_bytes_are_in() throws {
        let stream: [UInt8] = [0x11, 0x12] + Self.functionCode2Wire
        var decoder = SevenByteHeaderFrameDecoder()
        var buffer = FrameBuffer()
        for (index, byte) in stream.prefix(6).enumerated() {
            buffer.append(contentsOf: [byte])
            #expect(try decoder.decode(&buffer) == nil, "after \(index + 1) bytes")
        }
        buffer.append(contentsOf: [stream[6]])
        #expect(throws: FramingError.unsupportedVersion(0x1112)) { try decoder.decode(&buffer) }
        #expect(buffer.readableBytes == 7)  // nothing consumed, nothing delivered
        // Fed whole, the same: no frame before the error.
        var reader = FrameReader(decoder: SevenByteHeaderFrameDecoder())
        reader.append(Data(stream))
        #expect(throws: FramingError.unsupportedVersion(0x1112)) { try reader.nextFrame() }
        #expect(FramingError.unsupportedVersion(0x1112).description == "unsupported header version 4370 (0x1112)")
    }

    @Test func without_version_checks_the_junk_header_waits_for_a_512_byte_body() throws {
        // The behaviour the issue reported, still available with acceptedVersions nil.
        var reader = FrameReader(decoder: SevenByteHeaderFrameDecoder(acceptedVersions: nil))
        reader.append(Data([0x11, 0x12] + Self.functionCode2Wire))
        #expect(try reader.nextFrame() == nil)
        reader.append(Data(count: 512 - 4))
        #expect(
            try reader.nextFrame()
                == SevenByteHeaderFrame(version: 0x1112, functionCode: 0x0001, body: Data([0x00, 0x02, 0x7B, 0x7D]) + Data(count: 508)))
    }

    @Test func an_unknown_function_code_fails_as_soon_as_the_header_is_in_before_its_body() {
        let decoder = SevenByteHeaderFrameDecoder(isKnownFunctionCode: { code, _ in code == 10 || code == 11 })
        // Function code 12 with a body of 65_535 bytes, none of which has arrived.
        var reader = FrameReader(decoder: decoder)
        reader.append(Data([0x00, 0x01, 0x00, 0x0C, 0x00, 0xFF, 0xFF]))
        #expect(throws: FramingError.unknownFunctionCode(12)) { try reader.nextFrame() }
        #expect(FramingError.unknownFunctionCode(0x7777).description == "unknown function code 30583 (0x7777)")
        // Known codes decode under every cutting.
        DecoderVerifier.verify({ decoder }, bytes: Self.plainWire + Self.emptyWire, expecting: [Self.plainFrame, Self.emptyFrame])
    }

    @Test func the_version_is_checked_before_the_function_code_and_the_compressed_flag() {
        let decoder = SevenByteHeaderFrameDecoder(isKnownFunctionCode: { code, _ in code == 10 })
        #expect(throws: FramingError.unsupportedVersion(9)) { try decodeAll([0x00, 0x09, 0x00, 0x0B, 0x05, 0x00, 0x00], decoder) }
        #expect(throws: FramingError.unknownFunctionCode(11)) { try decodeAll([0x00, 0x01, 0x00, 0x0B, 0x05, 0x00, 0x00], decoder) }
        #expect(throws: FramingError.malformedHeader("compressed flag is 5, expected 0 or 1")) {
            try decodeAll([0x00, 0x01, 0x00, 0x0A, 0x05, 0x00, 0x00], decoder)
        }
    }

    @Test func a_function_code_known_only_in_another_version_fails_as_soon_as_the_header_is_in() throws {
        // Code 20 exists in version 2 only (as the chat's 0x0014 to 0x001B do).
        let decoder = SevenByteHeaderFrameDecoder(
            acceptedVersions: [1, 2],
            isKnownFunctionCode: { code, version in
                code == 10 || (code == 20 && version == 2)
            })
        var reader = FrameReader(decoder: decoder)
        reader.append(Data([0x00, 0x01, 0x00, 0x14, 0x00, 0x10, 0x00]))  // 4,096 bytes of body announced, none sent
        #expect(throws: FramingError.unknownFunctionCode(20)) { try reader.nextFrame() }
        var accepted = FrameReader(decoder: decoder)
        accepted.append(Data([0x00, 0x02, 0x00, 0x14, 0x00, 0x00, 0x02, 0x7B, 0x7D]))
        #expect(try accepted.nextFrame() == SevenByteHeaderFrame(version: 2, functionCode: 20, body: Data("{}".utf8)))
    }

    @Test func a_body_length_over_max_wire_body_length_fails_as_soon_as_the_header_is_in() throws {
        let decoder = SevenByteHeaderFrameDecoder(maxWireBodyLength: 100)
        #expect(decoder.maximumFrameLength == 107)
        #expect(SevenByteHeaderFrameDecoder().maximumFrameLength == 65_542)
        var reader = FrameReader(decoder: decoder)
        reader.append(Data([0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x65]))  // 101 bytes announced
        #expect(throws: FramingError.frameTooLong(length: 101, maxFrameLength: 100)) { try reader.nextFrame() }
        // Exactly the limit decodes, however it is cut.
        let body = Data(repeating: 0x61, count: 100)
        let wire = [0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x64] + [UInt8](body)
        DecoderVerifier.verify({ decoder }, bytes: wire, expecting: [SevenByteHeaderFrame(version: 1, functionCode: 10, body: body)])
    }

    @Test func frames_before_a_bad_version_are_all_delivered_first() throws {
        var reader = FrameReader(decoder: SevenByteHeaderFrameDecoder())
        reader.append(Data(Self.plainWire + Self.emptyWire + [0x00, 0x02, 0x00, 0x0A, 0x00, 0x00, 0x00]))
        #expect(try reader.nextFrame() == Self.plainFrame)
        #expect(try reader.nextFrame() == Self.emptyFrame)
        #expect(throws: FramingError.unsupportedVersion(2)) { try reader.nextFrame() }
    }
}
