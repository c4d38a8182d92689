import Foundation
import SocketFraming
import Testing

/// Checks a `FrameDecoder` against sticky and half packets, in the manner of SwiftNIO's
/// `ByteToMessageDecoderVerifier`: the same bytes, fed in every way TCP may deliver them, must decode into
/// exactly the same frames.
public enum DecoderVerifier {
    /// Byte arrays up to this many bytes are also cut at every single position.
    public static let maxBytesForEveryCutPoint = 4096

    /// Feeds `bytes` to fresh decoders from `makeDecoder` in every cutting below, and records an issue
    /// naming the cutting unless each yields exactly `frames` and leaves 0 bytes buffered:
    ///
    /// 1. all at once;
    /// 2. one byte at a time;
    /// 3. in two chunks, cut at every position 1..<bytes.count (when `bytes.count <= maxBytesForEveryCutPoint`);
    /// 4. `randomCuttings` random cuttings into chunks, drawn from `SplitMix64(seed: seed)`.
    ///
    /// After each chunk it calls `decode` until nil; at the end `decodeLast` until nil. It also records
    /// a broken contract: a nil from `decode` that changed the readable bytes, a nil from `decode` with
    /// `maximumFrameLength` or more bytes readable (a reader bounded by that maximum, such as a socket's
    /// read, would refuse the stream there), or a frame that consumed nothing. Only the first failing
    /// cutting of each kind is recorded.
    public static func verify<D: FrameDecoder>(
        _ makeDecoder: () -> D,
        bytes: [UInt8],
        expecting frames: [D.Frame],
        randomCuttings: Int = 200,
        seed: UInt64 = 0x5EED_F4A3_1CE5_0001,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where D.Frame: Equatable {
        func check(_ chunkSizes: [Int], _ name: @autoclosure () -> String) -> Bool {
            if let failure = run(makeDecoder(), bytes: bytes, chunkSizes: chunkSizes, expecting: frames) {
                Issue.record("\(name()): \(failure)", sourceLocation: sourceLocation)
                return false
            }
            return true
        }

        _ = check(bytes.isEmpty ? [] : [bytes.count], "all at once")
        _ = check(Array(repeating: 1, count: bytes.count), "one byte at a time")
        if bytes.count <= maxBytesForEveryCutPoint {
            for cut in bytes.indices.dropFirst() {
                guard check([cut, bytes.count - cut], "cut at byte \(cut) of \(bytes.count)") else { break }
            }
        }
        var random = SplitMix64(seed: seed)
        for cutting in 0..<randomCuttings {
            let chunkSizes = randomChunkSizes(total: bytes.count, using: &random)
            guard check(chunkSizes, "random cutting #\(cutting) (seed \(seed)) into chunks \(chunkSizes)") else {
                break
            }
        }
    }

    /// Encodes `messages` with `encoder` into one byte stream, as a sender writing them back to back would,
    /// then `verify`s that every cutting of it decodes into exactly `frames`.
    public static func verifyRoundTrip<E: FrameEncoder, D: FrameDecoder>(
        encoder: E,
        _ makeDecoder: () -> D,
        messages: [E.Message],
        expecting frames: [D.Frame],
        randomCuttings: Int = 200,
        seed: UInt64 = 0x5EED_F4A3_1CE5_0001,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where D.Frame: Equatable {
        var stream = Data()
        for (index, message) in messages.enumerated() {
            do {
                try encoder.encode(message, into: &stream)
            } catch {
                Issue.record("encoding message #\(index) threw \(error)", sourceLocation: sourceLocation)
                return
            }
        }
        verify(
            makeDecoder, bytes: [UInt8](stream), expecting: frames, randomCuttings: randomCuttings, seed: seed,
            sourceLocation: sourceLocation)
    }

    /// `verifyRoundTrip` for codecs whose decoded frames are the messages themselves.
    public static func verifyRoundTrip<E: FrameEncoder, D: FrameDecoder>(
        encoder: E,
        _ makeDecoder: () -> D,
        messages: [E.Message],
        randomCuttings: Int = 200,
        seed: UInt64 = 0x5EED_F4A3_1CE5_0001,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where D.Frame == E.Message, D.Frame: Equatable {
        verifyRoundTrip(
            encoder: encoder, makeDecoder, messages: messages, expecting: messages,
            randomCuttings: randomCuttings, seed: seed, sourceLocation: sourceLocation)
    }

    /// Chunk sizes adding up to `total`: each at most a maximum drawn once per cutting, so that some
    /// cuttings are fine-grained and some coarse.
    static func randomChunkSizes(total: Int, using random: inout SplitMix64) -> [Int] {
        guard total > 0 else { return [] }
        let maxChunk = Int.random(in: 1...total, using: &random)
        var sizes: [Int] = []
        var remaining = total
        while remaining > 0 {
            let size = Int.random(in: 1...min(maxChunk, remaining), using: &random)
            sizes.append(size)
            remaining -= size
        }
        return sizes
    }

    /// Feeds `bytes` in chunks of `chunkSizes` bytes; returns what went wrong, or nil.
    static func run<D: FrameDecoder>(
        _ decoder: D, bytes: [UInt8], chunkSizes: [Int], expecting expected: [D.Frame]
    ) -> String? where D.Frame: Equatable {
        var decoder = decoder
        var buffer = FrameBuffer()
        var decoded: [D.Frame] = []
        var start = 0
        do {
            for size in chunkSizes {
                buffer.append(contentsOf: Array(bytes[start..<(start + size)]))
                start += size
                while true {
                    let before = buffer.readableBytes
                    guard let frame = try decoder.decode(&buffer) else {
                        if buffer.readableBytes != before {
                            return "decode returned nil but changed the readable bytes from \(before) to "
                                + "\(buffer.readableBytes) after \(start) bytes"
                        }
                        if buffer.readableBytes >= decoder.maximumFrameLength {
                            return "decode returned nil with \(buffer.readableBytes) bytes readable, not under "
                                + "maximumFrameLength \(decoder.maximumFrameLength), after \(start) bytes"
                        }
                        break
                    }
                    if buffer.readableBytes == before {
                        return "decode returned a frame without consuming any bytes after \(start) bytes"
                    }
                    decoded.append(frame)
                }
            }
            while true {
                let before = buffer.readableBytes
                guard let frame = try decoder.decodeLast(&buffer) else { break }
                if buffer.readableBytes == before {
                    return "decodeLast returned a frame without consuming any bytes"
                }
                decoded.append(frame)
            }
        } catch {
            return "threw \(error) after \(start) bytes and \(decoded.count) frames"
        }
        if decoded != expected {
            return "decoded \(decoded.count) frames \(decoded), expected \(expected.count) frames \(expected)"
        }
        if buffer.readableBytes != 0 {
            return "\(buffer.readableBytes) bytes left buffered"
        }
        return nil
    }
}
