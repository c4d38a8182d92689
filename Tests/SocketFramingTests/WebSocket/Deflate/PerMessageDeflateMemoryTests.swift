import CZlib
import Foundation
import Testing
@testable import SocketFraming

/// zlib's state per permessage-deflate direction, counted with a counting allocator, against zlib's
/// formula (zconf.h); the numbers behind `ServerConfiguration`'s defaults and docs/BENCHMARKS.md
/// ("permessage-deflate memory per connection"). Prints a table.
@Suite(.serialized) struct PerMessageDeflateMemoryTests {
    /// Bytes zlib asked for through `zalloc` and has not given back.
    final class Counter {
        var liveBytes = 0
        var sizes: [UnsafeMutableRawPointer: Int] = [:]
    }

    /// A `z_stream` whose allocations `counter` counts.
    static func countedStream(_ counter: Counter) -> UnsafeMutablePointer<z_stream> {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        stream.pointee.opaque = Unmanaged.passUnretained(counter).toOpaque()
        stream.pointee.zalloc = { opaque, items, size in
            guard let opaque, let memory = malloc(Int(items) * Int(size)) else { return nil }
            let counter = Unmanaged<Counter>.fromOpaque(opaque).takeUnretainedValue()
            counter.sizes[memory] = Int(items) * Int(size)
            counter.liveBytes += Int(items) * Int(size)
            return memory
        }
        stream.pointee.zfree = { opaque, memory in
            guard let opaque, let memory else { return }
            let counter = Unmanaged<Counter>.fromOpaque(opaque).takeUnretainedValue()
            counter.liveBytes -= counter.sizes.removeValue(forKey: memory) ?? 0
            free(memory)
        }
        return stream
    }

    /// zlib's state for a compressor of `windowBits` and `memoryLevel` that has compressed a message.
    static func deflateStateBytes(windowBits: Int, memoryLevel: Int32) -> Int {
        let counter = Counter()
        let stream = countedStream(counter)
        defer { stream.deallocate() }
        let status = deflateInit2_(
            stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, PerMessageDeflate.deflateWindowBits(windowBits), memoryLevel, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK)
        defer { deflateEnd(stream) }
        return counter.liveBytes
    }

    /// zlib's state for a decompressor of `windowBits` that has inflated a message (the window comes then).
    static func inflateStateBytes(windowBits: Int) -> Int {
        let counter = Counter()
        let stream = countedStream(counter)
        defer { stream.deallocate() }
        precondition(
            inflateInit2_(stream, PerMessageDeflate.inflateWindowBits(windowBits), ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        )
        defer { inflateEnd(stream) }
        var input: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00, 0x00, 0xFF, 0xFF]
        var output = [UInt8](repeating: 0, count: 16)
        input.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                stream.pointee.next_in = input.baseAddress
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = output.baseAddress
                stream.pointee.avail_out = uInt(output.count)
                _ = inflate(stream, Z_SYNC_FLUSH)
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
            }
        }
        return counter.liveBytes
    }

    @Test func deflate_state_is_zlibs_formula_plus_its_fixed_state() {
        var table = "permessage-deflate zlib state (zlib \(String(cString: zlibVersion()))), bytes:\n"
        for memoryLevel: Int32 in [8, 4, 1] {
            for windowBits in [15, 12, 10, 9, 8] {
                let measured = Self.deflateStateBytes(windowBits: windowBits, memoryLevel: memoryLevel)
                let zlibBits = max(windowBits, 9)  // 8 is compressed with 9
                let formula = (1 << (zlibBits + 2)) + (1 << (Int(memoryLevel) + 9))
                table += "deflate windowBits \(windowBits) memLevel \(memoryLevel): \(measured) (formula \(formula))\n"
                #expect(measured >= formula && measured < formula + 8 * 1024, "windowBits \(windowBits) memLevel \(memoryLevel)")
            }
        }
        for windowBits in [15, 12, 10, 9, 8] {
            let measured = Self.inflateStateBytes(windowBits: windowBits)
            table += "inflate windowBits \(windowBits): \(measured) (formula \(1 << windowBits) + state)\n"
            #expect(measured >= 1 << windowBits && measured < (1 << windowBits) + 8 * 1024, "windowBits \(windowBits)")
        }
        print(table, terminator: "")
    }

    @Test func an_idle_connection_with_the_default_server_configuration_holds_no_compressor() throws {
        let offer = PerMessageDeflate.ClientConfiguration().offer  // what Chrome offers
        guard case let .accepted(agreement, _, _) = PerMessageDeflate.ServerConfiguration().negotiate([offer]) else {
            Issue.record("declined")
            return
        }
        let compressor = PerMessageDeflate.Compressor(agreement: agreement, role: .server)
        let decompressor = PerMessageDeflate.Decompressor(agreement: agreement, role: .server)
        _ = compressor.compress(Data("Hello".utf8))
        _ = try decompressor.decompress(
            PerMessageDeflate.Compressor(agreement: agreement, role: .client).compress(Data("Hi".utf8)), maxMessageBytes: 2)
        #expect(!compressor.holdsContext)
        #expect(decompressor.holdsContext)
        #expect(decompressor.windowBits == 12)
        #expect(Self.inflateStateBytes(windowBits: 12) < 12 * 1024)
    }
}
