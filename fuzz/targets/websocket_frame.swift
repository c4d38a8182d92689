// Fuzz target: WebSocketFrameDecoder (either role, a frame limit from 125 bytes, any allowed reserved
// bits) and WebSocketMessageAssembler (a message limit) on the frames it decodes.
//
// Besides the harness's checks (same frames however the stream is cut, the FrameDecoder contract), it
// traps when
// - a decoded frame does not re-encode to exactly the bytes it was decoded from (lengths are minimal, so
//   the encoding is canonical; a client's frame is re-encoded with the key it arrived with);
// - a frame breaks a rule the decoder enforces (role's masking, allowed reserved bits, control-frame
//   rules, the frame limit), or a message breaks one the assembler enforces (the message limit);
// - UTF8Validator disagrees with the standard library's UTF-8 validation on a payload, or the assembler
//   hands on text that is not the payloads' bytes;
// - `partialFrame(in:payloadOffset:)` on a prefix of a decoded frame's bytes disagrees with the frame
//   (header fields, announced length, the unmasked payload bytes from the offset).
import Foundation
import SocketFraming

/// The WebSocket decoder as a `FrameDecoder`, for the shared harness; its errors become `.malformedHeader`.
struct FuzzedWebSocketDecoder: FrameDecoder {
    var decoder: WebSocketFrameDecoder
    var maximumFrameLength: Int { decoder.maximumFrameLength }

    mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> WebSocketFrame? {
        do { return try decoder.decode(&buffer) } catch { throw .malformedHeader(error.description) }
    }
}

/// Always returns `value`: re-encodes a frame with the masking key it arrived with.
struct KeyGenerator: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrame(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let role: WebSocketRole = input.bool() ? .server : .client
    let maxFrameSize = 125 + input.int(in: 0...255) * 3
    let allowed = WebSocketReservedBits(rawValue: input.byte())
    let maxMessageSize = input.int(in: 0...255) * 4
    let chunkSeed = input.byte()
    let stream = input.rest()
    let makeDecoder = {
        FuzzedWebSocketDecoder(
            decoder: WebSocketFrameDecoder(role: role, maxFrameSize: maxFrameSize, allowedReservedBits: allowed))
    }
    FuzzedWebSocketDecoder.check(makeDecoder, stream, chunkSeed: chunkSeed, maxBufferedBytes: makeDecoder().maximumFrameLength)

    var decoder = makeDecoder().decoder
    var assembler = WebSocketMessageAssembler(maxMessageSize: maxMessageSize)
    var assemblerFailed = false
    var buffer = FrameBuffer()
    buffer.append(contentsOf: stream)
    var offset = 0
    var textSoFar: [UInt8] = []
    while let frame = try? decoder.decode(&buffer) {
        let consumed = stream.count - buffer.readableBytes
        checkRules(frame, role: role, maxFrameSize: maxFrameSize, allowed: allowed)
        checkReencoding(frame, role: role, bytes: stream[offset..<consumed])
        checkPartialFrame(frame, decoder: decoder, bytes: stream[offset..<consumed], seed: Int(chunkSeed) &+ offset)
        offset = consumed
        checkValidator(frame.payload)
        if frame.opcode == .text { textSoFar = [] }
        if frame.opcode == .text || frame.opcode == .continuation { textSoFar += frame.payload }
        guard !assemblerFailed else { continue }
        do {
            switch try assembler.append(frame) {
            case let .text(text)?:
                guard Array(text.utf8) == textSoFar, text.utf8.count <= maxMessageSize else { fatalError("text message") }
            case let .binary(bytes)?:
                guard bytes.count <= maxMessageSize else { fatalError("binary message over the limit") }
            default:
                break
            }
        } catch {
            assemblerFailed = true
        }
    }
    return 0
}

func checkRules(_ frame: WebSocketFrame, role: WebSocketRole, maxFrameSize: Int, allowed: WebSocketReservedBits) {
    guard (frame.maskingKey != nil) == (role == .server) else { fatalError("masking against the role") }
    guard allowed.isSuperset(of: frame.reservedBits) else { fatalError("reserved bits not allowed") }
    guard frame.payload.count <= maxFrameSize else { fatalError("frame over the limit") }
    if frame.opcode.isControl {
        guard frame.fin, frame.payload.count <= 125 else { fatalError("control frame rules") }
    }
}

func checkReencoding(_ frame: WebSocketFrame, role: WebSocketRole, bytes: ArraySlice<UInt8>) {
    var generator = KeyGenerator(value: UInt64(frame.maskingKey?.rawValue ?? 0))
    var out = Data()
    do {
        try WebSocketFrameEncoder(role: role == .server ? .client : .server).encode(frame, into: &out, using: &generator)
    } catch {
        fatalError("a decoded frame does not encode: \(error)")
    }
    guard [UInt8](out) == Array(bytes) else { fatalError("re-encoding differs: \(frame)") }
}

func checkValidator(_ payload: Data) {
    let bytes = [UInt8](payload)
    let standard = String(validating: bytes, as: UTF8.self) != nil
    guard UTF8Validator.isValid(payload) == standard else { fatalError("UTF8Validator disagrees on \(bytes)") }
}

/// `partialFrame` on a prefix of `bytes` (one whole frame), cut and offset by `seed`: nil, or the frame's
/// header fields with the prefix's payload bytes from the offset.
func checkPartialFrame(_ frame: WebSocketFrame, decoder: WebSocketFrameDecoder, bytes: ArraySlice<UInt8>, seed: Int) {
    guard !bytes.isEmpty else { return }
    let cut = seed % bytes.count
    var buffer = FrameBuffer()
    buffer.append(contentsOf: Array(bytes.prefix(cut)))
    let payloadOffset = (seed / 7) % (frame.payload.count + 2)
    guard let (partial, length) = try? decoder.partialFrame(in: buffer, payloadOffset: payloadOffset) else { return }
    guard length == frame.payload.count, partial.fin == frame.fin, partial.opcode == frame.opcode,
        partial.reservedBits == frame.reservedBits, partial.maskingKey == frame.maskingKey
    else { fatalError("partial frame header differs: \(partial) vs \(frame)") }
    let start = min(payloadOffset, frame.payload.count)
    guard partial.payload == frame.payload.dropFirst(start).prefix(partial.payload.count),
        start + partial.payload.count < frame.payload.count || partial.payload.isEmpty
    else { fatalError("partial frame payload differs at offset \(payloadOffset)") }
}
