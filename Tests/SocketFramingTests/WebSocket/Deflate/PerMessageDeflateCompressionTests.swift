import Foundation
import TestSupport
import Testing
@testable import SocketFraming

/// Compression (RFC 7692 §7.2.1) against the RFC's examples, byte for byte, and round trips.
@Suite(.cpuBound) struct PerMessageDeflateCompressionTests {
    static let hello = Data("Hello".utf8)
    /// RFC 7692 §7.2.3.1: "Hello" in one compressed block.
    static let helloCompressed = Data([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
    /// RFC 7692 §7.2.3.2: the second "Hello" with the LZ77 window shared (a match 5 bytes back).
    static let helloAgainCompressed = Data([0xF2, 0x00, 0x11, 0x00, 0x00])
    /// RFC 7692 §7.2.3.3: "Hello" in a block with no compression (stored).
    static let helloStored = Data([0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00])

    @Test func hello_compresses_to_the_rfc_7692_example() {
        let compressor = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: false)
        #expect(compressor.compress(Self.hello) == Self.helloCompressed)
    }

    @Test func a_second_hello_with_context_takeover_refers_back_to_the_first() {
        let compressor = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: false)
        #expect(compressor.compress(Self.hello) == Self.helloCompressed)
        #expect(compressor.holdsContext)
        #expect(compressor.compress(Self.hello) == Self.helloAgainCompressed)
    }

    @Test func without_context_takeover_every_hello_is_compressed_afresh_and_no_state_is_kept() {
        let compressor = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true)
        for _ in 0..<3 {
            #expect(compressor.compress(Self.hello) == Self.helloCompressed)
            #expect(!compressor.holdsContext)
        }
    }

    @Test func level_0_gives_the_rfc_7692_stored_block_example() {
        let compressor = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: true, level: 0)
        #expect(compressor.compress(Self.hello) == Self.helloStored)
    }

    @Test(arguments: [false, true])
    func an_empty_message_compresses_to_one_zero_byte(noContextTakeover: Bool) {
        let compressor = PerMessageDeflate.Compressor(windowBits: 15, noContextTakeover: noContextTakeover)
        #expect(compressor.compress(Data()) == Data([0x00]))
        // Right after a flush zlib writes nothing for another empty flush; still one zero byte.
        #expect(compressor.compress(Data()) == Data([0x00]))
        #expect(compressor.compress(Self.hello) == Self.helloCompressed)
        #expect(compressor.compress(Data()) == Data([0x00]))
    }

    @Test func window_bits_8_compresses_with_zlibs_9_and_never_refers_back_more_than_256_bytes() throws {
        #expect(PerMessageDeflate.deflateWindowBits(8) == -9)
        #expect(PerMessageDeflate.deflateWindowBits(12) == -12)
        #expect(PerMessageDeflate.inflateWindowBits(8) == -8)
        var random = SplitMix64(seed: 8)
        // Repeats 300 bytes apart and closer: a 512-byte window would match the far ones.
        let block = random.bytes(count: 300)
        let message = Data(block + block + Array(block.prefix(200)) + Array(block.prefix(200)))
        let compressor = PerMessageDeflate.Compressor(windowBits: 8, noContextTakeover: false)
        let decompressor = PerMessageDeflate.Decompressor(windowBits: 8, noContextTakeover: false)
        for _ in 0..<4 {
            #expect(try decompressor.decompress(compressor.compress(message), maxMessageBytes: message.count) == message)
        }
    }

    static let settings: [(windowBits: Int, noContextTakeover: Bool)] = [
        (15, false), (15, true), (12, false), (9, true), (8, false), (8, true)
    ]

    @Test(arguments: settings)
    func random_messages_round_trip(windowBits: Int, noContextTakeover: Bool) throws {
        var random = SplitMix64(seed: UInt64(windowBits) * 2 + (noContextTakeover ? 1 : 0))
        let compressor = PerMessageDeflate.Compressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
        let decompressor = PerMessageDeflate.Decompressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
        let words = ["hello", "world", "{\"type\":\"message\"}", " ", "\u{00E9}t\u{00E9}", "0123456789"].map { Array($0.utf8) }
        for round in 0..<40 {
            let count = [0, 1, 17, 300, 5000, 70_000][round % 6]
            var message: [UInt8] = []
            if round % 3 == 0 {
                message = random.bytes(count: count)  // incompressible
            } else {
                while message.count < count { message += words[Int(random.next() % UInt64(words.count))] }
            }
            let compressed = compressor.compress(Data(message))
            #expect(compressor.holdsContext == !noContextTakeover)
            let inflated = try decompressor.decompress(compressed, maxMessageBytes: message.count)
            #expect(inflated == Data(message), "round \(round): \(message.count) bytes")
            #expect(decompressor.holdsContext == !noContextTakeover)
        }
    }

    @Test func a_compressor_and_decompressor_made_from_an_agreement_use_each_directions_parameters() throws {
        let agreement = PerMessageDeflate.Agreement(
            serverNoContextTakeover: true, clientNoContextTakeover: false, serverMaxWindowBits: 10, clientMaxWindowBits: 12)
        let serverOut = PerMessageDeflate.Compressor(agreement: agreement, role: .server)
        let clientIn = PerMessageDeflate.Decompressor(agreement: agreement, role: .client)
        let clientOut = PerMessageDeflate.Compressor(agreement: agreement, role: .client)
        let serverIn = PerMessageDeflate.Decompressor(agreement: agreement, role: .server)
        #expect([serverOut.windowBits, clientIn.windowBits, clientOut.windowBits, serverIn.windowBits] == [Int]([10, 10, 12, 12]))
        #expect([serverOut.noContextTakeover, clientIn.noContextTakeover] == [Bool]([true, true]))
        #expect([clientOut.noContextTakeover, serverIn.noContextTakeover] == [Bool]([false, false]))
        #expect(try clientIn.decompress(serverOut.compress(Self.hello), maxMessageBytes: 5) == Self.hello)
        #expect(try serverIn.decompress(clientOut.compress(Self.hello), maxMessageBytes: 5) == Self.hello)
    }
}
