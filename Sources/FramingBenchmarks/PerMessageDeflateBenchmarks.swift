// permessage-deflate (RFC 7692) settings side by side on a stream of chat-like JSON messages, for
// `framing-bench permessage-deflate` (docs/BENCHMARKS.md, "permessage-deflate memory per connection"):
// the bytes each setting sends and the time per message to compress and inflate.
import Foundation
import SocketFraming

/// One permessage-deflate setting measured on the message stream.
public struct PerMessageDeflateBenchmarkResult: Sendable {
    /// The setting, e.g. "context takeover, 12 bits".
    public var setting: String
    /// Messages in the stream.
    public var messages: Int
    /// Payload bytes before compression.
    public var plainBytes: Int
    /// Payload bytes after compression (what the frames carry).
    public var compressedBytes: Int
    /// Compression time per message, in nanoseconds (best of the passes).
    public var compressNanoseconds: Double
    /// Decompression time per message, in nanoseconds (best of the passes).
    public var decompressNanoseconds: Double
}

/// The settings measured and the timing loop.
public enum PerMessageDeflateBenchmarks {
    /// `count` chat messages as JSON of about 90–140 bytes: the same keys, varying users, rooms and text.
    public static func chatMessages(count: Int) -> [Data] {
        let words = ["hello", "see", "you", "at", "the", "meeting", "tomorrow", "ok", "thanks", "lunch", "where", "now"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        return (0..<count).map { index in
            let text = (0..<(3 + next(8))).map { _ in words[next(words.count)] }.joined(separator: " ")
            let json =
                "{\"type\":\"message\",\"id\":\(100_000 + index),\"room\":\"room-\(next(20))\",\"from\":\"user\(next(500))\","
                + "\"sentAt\":\"2026-12-06T10:\(10 + next(50)):\(10 + next(50))Z\",\"text\":\"\(text)\"}"
            return Data(json.utf8)
        }
    }

    /// Compresses and inflates `messages` with each setting, keeping the fastest of `passes` passes.
    public static func run(messages: [Data], passes: Int = 3) throws -> [PerMessageDeflateBenchmarkResult] {
        // (name, window bits, no context takeover, zlib memLevel)
        let settings: [(String, Int, Bool, Int32)] = [
            ("context takeover, 15 bits, memLevel 8", 15, false, 8), ("context takeover, 12 bits, memLevel 8", 12, false, 8),
            ("context takeover, 12 bits, memLevel 4", 12, false, 4), ("context takeover, 9 bits, memLevel 8", 9, false, 8),
            ("no context takeover (state freed per message), 15 bits, memLevel 8", 15, true, 8),
            ("no context takeover (state freed per message), 12 bits, memLevel 4", 12, true, 4)
        ]
        let plainBytes = messages.reduce(0) { $0 + $1.count }
        return try settings.map { name, windowBits, noContextTakeover, memoryLevel in
            var compressedBytes = 0
            var compressBest = Double.infinity
            var decompressBest = Double.infinity
            for _ in 0..<passes {
                let compressor = PerMessageDeflate.Compressor(
                    windowBits: windowBits, noContextTakeover: noContextTakeover, memoryLevel: memoryLevel)
                var start = ContinuousClock.now
                let compressed = messages.map { compressor.compress($0) }
                compressBest = min(compressBest, (ContinuousClock.now - start).seconds)
                compressedBytes = compressed.reduce(0) { $0 + $1.count }
                let decompressor = PerMessageDeflate.Decompressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
                start = ContinuousClock.now
                for (message, original) in zip(compressed, messages) {
                    guard try decompressor.decompress(message, maxMessageBytes: 1 << 20) == original else {
                        throw BenchmarkError(description: "\(name): a message did not round-trip")
                    }
                }
                decompressBest = min(decompressBest, (ContinuousClock.now - start).seconds)
            }
            return PerMessageDeflateBenchmarkResult(
                setting: name, messages: messages.count, plainBytes: plainBytes, compressedBytes: compressedBytes,
                compressNanoseconds: compressBest / Double(messages.count) * 1e9,
                decompressNanoseconds: decompressBest / Double(messages.count) * 1e9)
        }
    }
}
