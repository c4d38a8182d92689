import Foundation
import TestSupport
import Testing
@testable import SocketFraming

/// A compressed message inflated frame by frame (RFC 7692 §6.1: the payloads of a message's frames joined
/// are the compressed data) gives what the joined payload gives, and the limit holds across fragments.
@Suite(.cpuBound) struct PerMessageDeflateFragmentTests {
    typealias Vectors = PerMessageDeflateCompressionTests
    typealias DecompressionError = PerMessageDeflate.DecompressionError

    /// `payload` cut at `cuts`, inflated fragment by fragment; the outputs joined.
    static func inflate(
        _ payload: Data, cuts: [Int], with decompressor: PerMessageDeflate.Decompressor, maxMessageBytes: Int
    ) throws(DecompressionError) -> Data {
        var output = Data()
        var start = 0
        for (index, end) in (cuts + [payload.count]).enumerated() {
            let fragment = payload.subdata(in: start..<end)
            output += try decompressor.decompress(fragment: fragment, isFinal: index == cuts.count, maxMessageBytes: maxMessageBytes)
            start = end
        }
        return output
    }

    @Test func hello_cut_at_every_byte_inflates_to_hello_with_context_kept_across_messages() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        for cut in 0...Vectors.helloCompressed.count {
            #expect(try Self.inflate(Vectors.helloCompressed, cuts: [cut], with: decompressor, maxMessageBytes: 5) == Data("Hello".utf8))
            #expect(decompressor.holdsContext)
        }
        for cut in 0...Vectors.helloAgainCompressed.count {
            let again = try Self.inflate(Vectors.helloAgainCompressed, cuts: [cut], with: decompressor, maxMessageBytes: 5)
            #expect(again == Data("Hello".utf8), "cut at \(cut)")
        }
    }

    @Test func a_decompressor_without_context_takeover_holds_state_only_inside_a_message() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: true)
        #expect(try decompressor.decompress(fragment: Vectors.helloCompressed.prefix(3), isFinal: false, maxMessageBytes: 5).count <= 5)
        #expect(decompressor.holdsContext)
        _ = try decompressor.decompress(fragment: Vectors.helloCompressed.dropFirst(3), isFinal: true, maxMessageBytes: 5)
        #expect(!decompressor.holdsContext)
    }

    @Test func random_messages_in_random_fragments_inflate_as_whole_ones() throws {
        var random = SplitMix64(seed: 77)
        let compressor = PerMessageDeflate.Compressor(windowBits: 11, noContextTakeover: false)
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 11, noContextTakeover: false)
        for round in 0..<30 {
            let message = Data((0..<(round * 997)).map { _ in UInt8(truncatingIfNeeded: random.next() % 7) })
            let payload = compressor.compress(message)
            let cuts = (0..<Int(random.next() % 5)).map { _ in Int(random.next() % UInt64(payload.count + 1)) }.sorted()
            #expect(try Self.inflate(payload, cuts: cuts, with: decompressor, maxMessageBytes: message.count) == message, "round \(round)")
        }
    }

    @Test func the_limit_counts_the_whole_message_across_fragments() throws {
        let message = Data(count: 100_000)
        let payload = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true).compress(message)
        let cuts = [payload.count / 3, 2 * payload.count / 3]
        let exact = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try Self.inflate(payload, cuts: cuts, with: exact, maxMessageBytes: 100_000) == message)
        let short = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(throws: DecompressionError.messageTooBig(maxBytes: 99_999)) {
            try Self.inflate(payload, cuts: cuts, with: short, maxMessageBytes: 99_999)
        }
        #expect(!short.holdsContext)
    }

    @Test func a_message_cut_inside_a_block_is_corrupt_only_at_its_final_fragment() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        let first = try decompressor.decompress(fragment: Vectors.helloCompressed.prefix(4), isFinal: false, maxMessageBytes: 5)
        #expect(first.count <= 5)
        #expect(throws: DecompressionError.corruptData("the message does not end on a deflate block boundary")) {
            try decompressor.decompress(fragment: Data(), isFinal: true, maxMessageBytes: 5)
        }
    }

    @Test func a_match_reaching_past_the_window_passes_whole_but_not_cut_as_zlib_checks_it() throws {
        // Found by the permessage_deflate fuzz target: 13 bytes inflating to 495 with a match further back
        // than 256 bytes. zlib allows it within one call's output, not across fragments.
        let payload = Data([0x2A, 0x1C, 0x48, 0x30, 0x92, 0x00, 0x5D, 0x1C, 0x48, 0x30, 0x00, 0x01, 0x00])
        let whole = try PerMessageDeflate.Decompressor(windowBits: 8, noContextTakeover: false).decompress(payload, maxMessageBytes: 1000)
        #expect(whole.count == 495)
        #expect(throws: DecompressionError.corruptData("inflate: invalid distance too far back (Z_DATA_ERROR -3)")) {
            try Self.inflate(payload, cuts: [11], with: .init(windowBits: 8, noContextTakeover: false), maxMessageBytes: 1000)
        }
        let wide = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        #expect(try Self.inflate(payload, cuts: [11], with: wide, maxMessageBytes: 1000) == whole)
    }

    @Test func fragments_after_a_final_block_are_ignored() throws {
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: false)
        let final = Data([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        #expect(try Self.inflate(final + [0xAB, 0xCD], cuts: [7], with: decompressor, maxMessageBytes: 5) == Data("Hello".utf8))
        #expect(try decompressor.decompress(Vectors.helloCompressed, maxMessageBytes: 5) == Data("Hello".utf8))
    }
}
