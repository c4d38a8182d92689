// Shared by every fuzz target: feeds the fuzzer's bytes to a decoder all at once and in chunks, and
// traps (so libFuzzer records a crash) when a decoder breaks its contract:
//
// - the frames before the first error, and whether there is an error, must not depend on the cutting;
// - `decode` returning nil must leave the readable bytes alone (unless the decoder discards a too-long
//   frame, which consumes as it goes);
// - the buffer must never hold more than the decoder's bound plus the last chunk, and `decode` must not
//   return nil while `maximumFrameLength` or more bytes are readable;
// - nothing may trap, also when decoding goes on after an error.
import Foundation
import SocketFraming

/// Reads configuration bytes off the front of the fuzzer's input.
struct FuzzInput {
    private(set) var bytes: ArraySlice<UInt8>

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = size > 0 && data != nil ? ArraySlice(UnsafeBufferPointer(start: data, count: size)) : []
    }

    /// The next byte, or 0 when none are left.
    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    /// A value in `range` drawn from the next byte.
    mutating func int(in range: ClosedRange<Int>) -> Int { range.lowerBound + Int(byte()) % range.count }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// The next `count` bytes (fewer if the input ends).
    mutating func take(_ count: Int) -> [UInt8] {
        let taken = Array(bytes.prefix(count))
        bytes = bytes.dropFirst(taken.count)
        return taken
    }

    /// Everything left: the stream.
    mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }
}

/// What feeding a stream produced: frames up to the first error, and whether there was one.
struct FeedResult<Frame> {
    var frames: [Frame] = []
    var failed = false
}

/// Feeds `stream` in chunks whose sizes come from `chunkSeed` (0: all at once), checking the contract.
func feed<D: FrameDecoder>(
    _ decoder: D, _ stream: [UInt8], chunkSeed: UInt8, maxBufferedBytes: Int, consumesOnNil: Bool
) -> FeedResult<D.Frame> {
    var decoder = decoder
    var buffer = FrameBuffer()
    var result = FeedResult<D.Frame>()
    var state = UInt32(chunkSeed) &* 2_654_435_761 | 1
    var start = 0
    func record(_ frame: D.Frame) { if !result.failed { result.frames.append(frame) } }
    while start < stream.count {
        var size = stream.count - start
        if chunkSeed != 0 {
            state = state &* 1_103_515_245 &+ 12345
            size = min(size, 1 + Int(state >> 16) % (Int(chunkSeed) + 1))
        }
        buffer.append(contentsOf: Array(stream[start..<(start + size)]))
        start += size
        while true {
            let before = buffer.readableBytes
            do {
                guard let frame = try decoder.decode(&buffer) else {
                    if !consumesOnNil && buffer.readableBytes != before {
                        fatalError("decode returned nil and consumed \(before - buffer.readableBytes) bytes")
                    }
                    // A reader bounded by the maximum (a socket's read limit) would refuse the stream here.
                    if !result.failed && buffer.readableBytes >= decoder.maximumFrameLength {
                        fatalError("decode returned nil with \(buffer.readableBytes) bytes readable, not under "
                            + "maximumFrameLength \(decoder.maximumFrameLength)")
                    }
                    break
                }
                if buffer.readableBytes == before { fatalError("decode returned a frame and consumed nothing") }
                record(frame)
            } catch {
                result.failed = true
                // Go on: a decoder that has thrown need not decode correctly, but it must never trap. Stop
                // only when it makes no progress.
                if buffer.readableBytes == before { break }
            }
        }
        if !result.failed && buffer.readableBytes > maxBufferedBytes + size {
            fatalError("\(buffer.readableBytes) bytes buffered, bound \(maxBufferedBytes) + chunk \(size)")
        }
    }
    for _ in 0..<10_000 {
        let before = buffer.readableBytes
        do {
            guard let frame = try decoder.decodeLast(&buffer) else { break }
            if buffer.readableBytes == before { fatalError("decodeLast returned a frame and consumed nothing") }
            record(frame)
        } catch {
            result.failed = true
            if buffer.readableBytes == before { break }
        }
    }
    return result
}

/// Feeds `stream` all at once and in the cutting `chunkSeed` picks, and traps unless both give the same
/// frames before the first error and agree on whether there is one.
func checkCuttingsAgree<D: FrameDecoder>(
    _ makeDecoder: () -> D, _ stream: [UInt8], chunkSeed: UInt8, maxBufferedBytes: Int, consumesOnNil: Bool = false,
    same: (D.Frame, D.Frame) -> Bool
) {
    let whole = feed(makeDecoder(), stream, chunkSeed: 0, maxBufferedBytes: maxBufferedBytes, consumesOnNil: consumesOnNil)
    let cut = feed(makeDecoder(), stream, chunkSeed: chunkSeed == 0 ? 1 : chunkSeed,
                   maxBufferedBytes: maxBufferedBytes, consumesOnNil: consumesOnNil)
    guard whole.failed == cut.failed, whole.frames.count == cut.frames.count,
          zip(whole.frames, cut.frames).allSatisfy(same)
    else {
        fatalError("all at once: \(whole.frames.count) frames, failed \(whole.failed); "
            + "cut: \(cut.frames.count) frames, failed \(cut.failed)")
    }
}

extension FrameDecoder where Frame: Equatable {
    /// `checkCuttingsAgree` comparing frames with `==`.
    static func check(
        _ makeDecoder: () -> Self, _ stream: [UInt8], chunkSeed: UInt8, maxBufferedBytes: Int, consumesOnNil: Bool = false
    ) {
        checkCuttingsAgree(makeDecoder, stream, chunkSeed: chunkSeed, maxBufferedBytes: maxBufferedBytes,
                           consumesOnNil: consumesOnNil, same: ==)
    }
}
