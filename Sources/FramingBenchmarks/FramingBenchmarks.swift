// FramingBenchmarks: decode throughput of every SocketFraming codec beside a plain memcpy of the same
// bytes, for the `framing-bench` executable (docs/BENCHMARKS.md, "Framing"). Not run by `swift test`.
import Foundation
import SocketFraming

/// One measured codec at one frame size.
public struct FramingBenchmarkResult: Sendable {
    /// The codec, e.g. "length field (4-byte prefix)".
    public var codec: String
    /// Bytes of payload per frame.
    public var payloadBytes: Int
    /// Frames decoded in one pass.
    public var frames: Int
    /// Bytes on the wire in one pass, headers and delimiters included.
    public var wireBytes: Int
    /// The fastest pass, in seconds.
    public var seconds: Double

    /// Wire bytes decoded per second, in millions (10^6) of bytes.
    public var megabytesPerSecond: Double { Double(wireBytes) / seconds / 1e6 }
    /// Frames decoded per second.
    public var framesPerSecond: Double { Double(frames) / seconds }
}

/// The codecs measured, their wire streams, and the timing loop.
public enum FramingBenchmarks {
    /// Bytes appended to the decoder's buffer at a time, as one socket read would deliver them: 64 KiB.
    public static let readBytes = 64 * 1024

    /// Measures every codec on frames of `payloadBytes` bytes, about `totalBytes` bytes of payload a pass,
    /// keeping the fastest of `passes` passes.
    public static func run(payloadBytes: Int, totalBytes: Int, passes: Int = 3) throws -> [FramingBenchmarkResult] {
        let count = max(1, totalBytes / payloadBytes)
        // Printable bytes without CR or LF, so the same payloads suit the delimiter codecs.
        let payload = Data((0..<payloadBytes).map { UInt8(0x20 + ($0 * 31) % 95) })
        let sevenPayload = payload.prefix(SevenByteHeaderFrame.maxWireBodyLength)
        var results: [FramingBenchmarkResult] = []

        func measure<D: FrameDecoder>(
            _ codec: String, payloadBytes: Int = payloadBytes, wire: Data,
            _ makeDecoder: () -> D
        ) throws {
            let bytes = [UInt8](wire)
            var best = Double.infinity
            for _ in 0..<passes {
                let start = ContinuousClock.now
                let frames = try decodeAll(bytes, makeDecoder())
                let seconds = (ContinuousClock.now - start).seconds
                guard frames == count else { throw BenchmarkError(description: "\(codec): \(frames) frames, expected \(count)") }
                best = min(best, seconds)
            }
            results.append(
                FramingBenchmarkResult(
                    codec: codec, payloadBytes: payloadBytes, frames: count,
                    wireBytes: bytes.count, seconds: best))
        }

        func wire<E: FrameEncoder>(_ encoder: E, _ message: E.Message) throws -> Data {
            var out = Data()
            let one = try encoder.encode(message)
            out.reserveCapacity(one.count * count)
            for _ in 0..<count { out.append(one) }
            return out
        }

        let lengthPrefixed = try wire(LengthFieldPrepender(lengthFieldLength: 4), payload)
        results.append(memcpyBaseline(lengthPrefixed, frames: count, payloadBytes: payloadBytes, passes: passes))
        try measure("length field (4-byte prefix)", wire: lengthPrefixed) {
            LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 20)
        }
        let crlf = try wire(DelimiterFrameEncoder(delimiter: DelimiterBasedFrameDecoder.crlf), payload)
        try measure("delimiter (CRLF)", wire: crlf) {
            DelimiterBasedFrameDecoder(maxFrameLength: 1 << 20, delimiter: DelimiterBasedFrameDecoder.crlf)
        }
        try measure("delimiter (CRLF or LF)", wire: crlf) { DelimiterBasedFrameDecoder.lines(maxFrameLength: 1 << 20) }
        try measure("fixed length", wire: try wire(FixedLengthFrameEncoder(frameLength: payloadBytes), payload)) {
            FixedLengthFrameDecoder(frameLength: payloadBytes)
        }
        try measure(
            "seven-byte header", payloadBytes: sevenPayload.count,
            wire: try wire(
                SevenByteHeaderFrameEncoder(),
                SevenByteHeaderFrame(version: 1, functionCode: 1, body: Data(sevenPayload)))
        ) { SevenByteHeaderFrameDecoder() }
        try measure(
            "eight-byte header",
            wire: try wire(
                EightByteHeaderFrameEncoder(),
                EightByteHeaderFrame(serviceID: 1, body: payload))
        ) { EightByteHeaderFrameDecoder() }
        try measure(
            "JSON header",
            wire: try wire(
                JSONHeaderFrameEncoder(),
                JSONHeaderFrame(fields: ["type": .string("chat")], body: payload))
        ) { JSONHeaderFrameDecoder() }
        return results
    }

    /// Feeds `bytes` in `readBytes` chunks; returns the number of frames decoded.
    static func decodeAll<D: FrameDecoder>(_ bytes: [UInt8], _ decoder: D) throws -> Int {
        var reader = FrameReader(decoder: decoder)
        var frames = 0
        try bytes.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                let end = min(start + readBytes, all.count)
                reader.append(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                start = end
                while try reader.nextFrame() != nil { frames += 1 }
            }
        }
        while try reader.finish() != nil { frames += 1 }
        return frames
    }

    /// The same bytes copied by `memcpy` in `readBytes` chunks into one read buffer: the floor any decoder
    /// that copies its input once stands on.
    static func memcpyBaseline(_ wire: Data, frames: Int, payloadBytes: Int, passes: Int) -> FramingBenchmarkResult {
        let bytes = [UInt8](wire)
        let destination = UnsafeMutableRawPointer.allocate(byteCount: readBytes, alignment: 16)
        defer { destination.deallocate() }
        var best = Double.infinity
        var checksum: UInt8 = 0
        for _ in 0..<passes {
            let start = ContinuousClock.now
            bytes.withUnsafeBytes { all in
                guard let base = all.baseAddress else { return }
                var offset = 0
                while offset < all.count {
                    let length = min(readBytes, all.count - offset)
                    memcpy(destination, base + offset, length)
                    checksum &+= destination.load(as: UInt8.self)
                    offset += length
                }
            }
            best = min(best, (ContinuousClock.now - start).seconds)
        }
        blackHole(checksum)
        return FramingBenchmarkResult(
            codec: "memcpy (baseline)", payloadBytes: payloadBytes, frames: frames,
            wireBytes: bytes.count, seconds: best)
    }

    @inline(never) static func blackHole(_ value: UInt8) { if value == 0x5A && CommandLine.arguments.isEmpty { print(value) } }
}

/// A benchmark's decoder did not produce the frames it should have.
public struct BenchmarkError: Error, CustomStringConvertible {
    /// What went wrong, naming the codec.
    public var description: String
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
