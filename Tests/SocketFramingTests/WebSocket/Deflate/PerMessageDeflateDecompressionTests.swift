import Foundation
import TestSupport
import Testing
@testable import SocketFraming

/// Decompression (RFC 7692 §7.2.2): the RFC's examples, the bomb bound, corrupted input.
@Suite(.cpuBound) struct PerMessageDeflateDecompressionTests {
    typealias Vectors = PerMessageDeflateCompressionTests
    static let hello = Data("Hello".utf8)

    @Test func the_rfc_7692_hello_examples_inflate_with_context_takeover() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 5) == Self.hello)
        #expect(try decompressor.decompress(Vectors.helloAgainCompressed, maxMessageBytes: 5) == Self.hello)
        #expect(try decompressor.decompress(Vectors.helloStored, maxMessageBytes: 5) == Self.hello)
    }

    @Test func without_context_takeover_a_back_reference_to_the_last_message_is_corrupt() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: true)
        #expect(try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 5) == Self.hello)
        #expect(!decompressor.holdsContext)
        #expect(throws: PerMessageDeflate.DecompressionError.corruptData("inflate: invalid distance too far back (Z_DATA_ERROR -3)")) {
            try decompressor.decompress(Vectors.helloAgainCompressed, maxMessageBytes: 5)
        }
    }

    @Test func two_deflate_blocks_in_one_message_inflate() throws {
        // RFC 7692 §7.2.3.5: "He" flushed, then "llo".
        let payload = Data([0xF2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xCA, 0xC9, 0xC9, 0x07, 0x00])
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try decompressor.decompress(payload, maxMessageBytes: 5) == Self.hello)
    }

    @Test func a_final_block_ends_the_message_and_the_history_restarts() throws {
        // RFC 7692 §7.2.3.4: "Hello" in a block with BFINAL set; bytes after the final block are ignored.
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try decompressor.decompress(Data([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00]), maxMessageBytes: 5) == Self.hello)
        #expect(try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 5) == Self.hello)
    }

    @Test func an_empty_message_is_the_single_byte_zero() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try decompressor.decompress(Data([0x00]), maxMessageBytes: 0) == Data())
    }

    @Test func a_message_of_exactly_the_limit_is_accepted_and_one_more_byte_is_too_big() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: true)
        #expect(try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 5) == Self.hello)
        #expect(throws: PerMessageDeflate.DecompressionError.messageTooBig(maxBytes: 4)) {
            try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 4)
        }
        #expect(throws: PerMessageDeflate.DecompressionError.messageTooBig(maxBytes: 0)) {
            try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 0)
        }
    }

    @Test(arguments: [false, true])
    func a_bomb_stops_at_the_limit_without_reserving_more_than_it(noContextTakeover: Bool) throws {
        // 16 MiB of zeros deflate to about 16 KiB; the limit is 1 MiB.
        let bomb = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true, level: 9).compress(Data(count: 16 << 20))
        #expect(bomb.count < 17_000)
        let limit = 1 << 20
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: noContextTakeover)
        #expect(throws: PerMessageDeflate.DecompressionError.messageTooBig(maxBytes: limit)) {
            try decompressor.decompress(bomb, maxMessageBytes: limit)
        }
        #expect(decompressor.lastReservedBytes == limit)
        #expect(RawZStream.chunkBytes == 16 * 1024)  // zlib's output chunk beside the message buffer
        #expect(!decompressor.holdsContext)
        #expect(PerMessageDeflate.DecompressionError.messageTooBig(maxBytes: limit).closeCode == 1009)
    }

    @Test func the_largest_limit_does_not_overflow() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: .max) == Self.hello)
    }

    @Test func a_small_message_reserves_little() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        _ = try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 64 << 20)
        #expect(decompressor.lastReservedBytes == 256)
    }

    @Test func corrupted_input_is_a_typed_error_closing_with_1007() {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        // Block type 3 is reserved (RFC 1951 §3.2.3).
        let reserved = PerMessageDeflate.DecompressionError.corruptData("inflate: invalid block type (Z_DATA_ERROR -3)")
        #expect(throws: reserved) { try decompressor.decompress(Data([0xFF, 0xFF]), maxMessageBytes: 100) }
        #expect(reserved.closeCode == 1007)
        // A stored block whose NLEN is not LEN's complement.
        #expect(throws: PerMessageDeflate.DecompressionError.corruptData("inflate: invalid stored block lengths (Z_DATA_ERROR -3)")) {
            try decompressor.decompress(Data([0x00, 0x05, 0x00, 0xFA, 0xFE, 0x48]), maxMessageBytes: 100)
        }
    }

    @Test func a_payload_cut_inside_a_block_is_corrupt() {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(throws: PerMessageDeflate.DecompressionError.corruptData("the message does not end on a deflate block boundary")) {
            try decompressor.decompress(Vectors.helloCompressed.prefix(4), maxMessageBytes: 100)
        }
        #expect(!decompressor.holdsContext)
    }

    @Test func the_empty_payload_is_corrupt() {
        // 00 00 ff ff alone is no block header: the stored block's LEN would be ff 00.
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: true)
        #expect(throws: PerMessageDeflate.DecompressionError.self) {
            try decompressor.decompress(Data(), maxMessageBytes: 100)
        }
    }
}
