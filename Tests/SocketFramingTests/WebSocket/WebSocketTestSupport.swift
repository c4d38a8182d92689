import Foundation
import SocketFraming

/// A generator whose every `next()` is `value`: a fixed masking key for tests (its low 32 bits).
struct FixedGenerator: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

/// `WebSocketFrameDecoder` as a `FrameDecoder`, so that the shared `DecoderVerifier` can check it: its
/// errors become `FramingError.malformedHeader` with their description.
struct VerifiedWebSocketDecoder: FrameDecoder {
    var decoder: WebSocketFrameDecoder

    var maximumFrameLength: Int { decoder.maximumFrameLength }

    mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> WebSocketFrame? {
        do {
            return try decoder.decode(&buffer)
        } catch {
            throw .malformedHeader(error.description)
        }
    }

    mutating func decodeLast(_ buffer: inout FrameBuffer) throws(FramingError) -> WebSocketFrame? {
        do {
            return try decoder.decodeLast(&buffer)
        } catch {
            throw .malformedHeader(error.description)
        }
    }
}

/// What feeding bytes to a decoder and an assembler produced: the messages, then the error, if any.
struct WebSocketFeedOutcome: Equatable {
    var messages: [WebSocketMessage] = []
    var error: WebSocketProtocolError?
}

/// Feeds `bytes` in chunks of `chunkSizes` (all at once when nil) to a fresh `decoder` and `assembler`,
/// decoding and assembling after each chunk, and stops at the first error.
func feedMessages(
    _ bytes: [UInt8], chunkSizes: [Int]? = nil, decoder: WebSocketFrameDecoder = WebSocketFrameDecoder(role: .server),
    assembler: WebSocketMessageAssembler = WebSocketMessageAssembler()
) -> WebSocketFeedOutcome {
    var decoder = decoder
    var assembler = assembler
    var buffer = FrameBuffer()
    var outcome = WebSocketFeedOutcome()
    var start = 0
    for size in chunkSizes ?? [bytes.count] {
        buffer.append(contentsOf: Array(bytes[start..<(start + size)]))
        start += size
        do throws(WebSocketProtocolError) {
            while let frame = try decoder.decode(&buffer) {
                if let message = try assembler.append(frame) { outcome.messages.append(message) }
            }
        } catch {
            outcome.error = error
            return outcome
        }
    }
    return outcome
}

/// Every way of cutting `count` bytes the tests try: whole, one byte at a time, and two pieces cut at
/// every position.
func everyCutting(of count: Int) -> [(name: String, chunkSizes: [Int])] {
    var cuttings: [(String, [Int])] = [("whole", [count]), ("one byte at a time", Array(repeating: 1, count: count))]
    for cut in 1..<max(count, 1) { cuttings.append(("cut at \(cut)", [cut, count - cut])) }
    return cuttings
}

/// `text`'s UTF-8 bytes as `Data`.
func data(_ text: String) -> Data { Data(text.utf8) }

/// A masked frame as a client sends it: header, `key`, payload XORed with it.
func maskedFrame(
    _ first: UInt8, payload: [UInt8], key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
) -> [UInt8] {
    precondition(payload.count <= 125, "test helper for short frames")
    let masked = payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    return [first, 0x80 | UInt8(payload.count)] + key + masked
}
