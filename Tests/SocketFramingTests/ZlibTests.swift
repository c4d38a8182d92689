import Foundation
import TestSupport
import Testing
@testable import SocketFraming

/// zlib, gzip and raw deflate; the known vectors were made by Python's `zlib`/`gzip` modules on the
/// same system zlib (1.2.13).
@Suite(.cpuBound) struct ZlibTests {
    static let plain = Data(utf8("hello, hello, hello, zlib!"))  // 26 bytes
    /// `zlib.compress(plain)`.
    static let zlibVector = Data([
        0x78, 0x9C, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0xC8, 0x40, 0xA1, 0xAA, 0x72, 0x32, 0x93, 0x14,
        0x01, 0x7C, 0x21, 0x08, 0xF3
    ])
    /// `zlib.compressobj(wbits=31)`: zlib's own gzip header (modification time 0, OS 3 = Unix).
    static let gzipVector = Data([
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51,
        0xC8, 0x40, 0xA1, 0xAA, 0x72, 0x32, 0x93, 0x14, 0x01, 0xCF, 0xAB, 0x86, 0x19, 0x1A, 0x00, 0x00, 0x00
    ])
    /// `gzip.compress(plain, mtime=0)`: Python's gzip header (extra flags 2).
    static let pythonGzipVector = Data([
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51,
        0xC8, 0x40, 0xA1, 0xAA, 0x72, 0x32, 0x93, 0x14, 0x01, 0xCF, 0xAB, 0x86, 0x19, 0x1A, 0x00, 0x00, 0x00
    ])
    /// `zlib.compressobj(wbits=-15)`.
    static let rawVector = Data([
        0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0xC8, 0x40, 0xA1, 0xAA, 0x72, 0x32, 0x93, 0x14, 0x01
    ])
    /// `zlib.compressobj(zdict=b"hello")`: needs a preset dictionary.
    static let presetDictionaryVector = Data([
        0x78, 0xBB, 0x06, 0x2C, 0x02, 0x15, 0xCB, 0x00, 0x11, 0x3A, 0x0A, 0xA8, 0x54, 0x55, 0x4E, 0x66, 0x92,
        0x22, 0x00, 0x7C, 0x21, 0x08, 0xF3
    ])

    @Test(arguments: [
        (CompressionFormat.zlib, zlibVector), (.gzip, gzipVector), (.gzip, pythonGzipVector), (.rawDeflate, rawVector)
    ])
    func known_vectors_decompress(format: CompressionFormat, vector: Data) throws {
        #expect(try Zlib.decompress(vector, format: format, maxOutputBytes: 1024) == Self.plain)
    }

    @Test(arguments: [(CompressionFormat.zlib, zlibVector), (.gzip, gzipVector), (.rawDeflate, rawVector)])
    func compression_at_the_default_level_matches_the_known_vectors(format: CompressionFormat, vector: Data) throws {
        #expect(try Zlib.compress(Self.plain, format: format) == vector)
    }

    @Test(arguments: [CompressionFormat.zlib, .gzip, .rawDeflate])
    func round_trips_of_empty_small_multi_chunk_and_incompressible_data(format: CompressionFormat) throws {
        var random = SplitMix64(seed: 3)
        let inputs = [
            Data(),
            Self.plain,
            Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 / 1000) }),  // several output chunks
            Data((0..<200_000).map { _ in UInt8(truncatingIfNeeded: random.next()) })  // incompressible
        ]
        for input in inputs {
            for level in [Int32(0), 1, -1, 9] {
                let compressed = try Zlib.compress(input, format: format, level: level)
                #expect(
                    try Zlib.decompress(compressed, format: format, maxOutputBytes: input.count) == input,
                    "\(input.count) bytes at level \(level)")
            }
        }
    }

    @Test func output_of_exactly_max_output_bytes_is_accepted_and_one_more_is_too_large() throws {
        #expect(try Zlib.decompress(Self.zlibVector, maxOutputBytes: 26) == Self.plain)
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 25)) {
            try Zlib.decompress(Self.zlibVector, maxOutputBytes: 25)
        }
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 0)) {
            try Zlib.decompress(Self.zlibVector, maxOutputBytes: 0)
        }
    }

    @Test func a_compression_bomb_stops_at_the_maximum() throws {
        let bomb = try Zlib.compress(Data(count: 10 << 20), level: 9)  // 10 MB of zeros
        #expect(bomb.count < 11_000)
        #expect(throws: FramingError.decompressedTooLarge(maxBytes: 1 << 20)) {
            try Zlib.decompress(bomb, maxOutputBytes: 1 << 20)
        }
    }

    @Test func a_corrupt_header_is_reported_with_zlibs_message_and_code() {
        var corrupt = Self.zlibVector
        corrupt[1] = 0x9D
        #expect(throws: FramingError.decompressionFailed("inflate: incorrect header check (Z_DATA_ERROR -3)")) {
            try Zlib.decompress(corrupt, maxOutputBytes: 1024)
        }
    }

    @Test func a_wrong_checksum_is_reported() {
        var corrupt = Self.zlibVector
        corrupt[corrupt.count - 1] ^= 0x01
        #expect(throws: FramingError.decompressionFailed("inflate: incorrect data check (Z_DATA_ERROR -3)")) {
            try Zlib.decompress(corrupt, maxOutputBytes: 1024)
        }
    }

    @Test func gzip_data_read_as_raw_deflate_is_an_invalid_block_type() {
        #expect(throws: FramingError.decompressionFailed("inflate: invalid block type (Z_DATA_ERROR -3)")) {
            try Zlib.decompress(Self.gzipVector, format: .rawDeflate, maxOutputBytes: 1024)
        }
    }

    @Test func a_truncated_stream_is_reported() {
        for data in [Self.zlibVector.dropLast(), Data(), Self.gzipVector.prefix(10)] {
            #expect(throws: FramingError.decompressionFailed("compressed data ends before the end of the stream")) {
                try Zlib.decompress(Data(data), format: data.first == 0x1F ? .gzip : .zlib, maxOutputBytes: 1024)
            }
        }
    }

    @Test func bytes_after_the_end_of_the_stream_are_reported() {
        #expect(throws: FramingError.decompressionFailed("2 bytes follow the end of the compressed stream")) {
            try Zlib.decompress(Self.zlibVector + [0x00, 0x01], maxOutputBytes: 1024)
        }
    }

    @Test func a_stream_needing_a_preset_dictionary_is_reported() {
        #expect(throws: FramingError.decompressionFailed("inflate: a preset dictionary is needed (Z_NEED_DICT 2)")) {
            try Zlib.decompress(Self.presetDictionaryVector, maxOutputBytes: 1024)
        }
    }

    @Test func the_formats_use_the_window_bits_of_the_zlib_manual() {
        #expect([CompressionFormat.zlib, .gzip, .rawDeflate].map(\.windowBits) == [15, 31, -15])
    }
}
