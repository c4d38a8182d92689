// Fuzz target: DelimiterBasedFrameDecoder with one to three delimiters of one to three bytes each (taken
// from the input, so they overlap and share prefixes), stripping or keeping them, with or without fail-fast.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDelimiter(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let delimiters = (0..<input.int(in: 1...3)).map { _ in
        // Delimiters from a small alphabet, so that the stream holds them often.
        (0..<input.int(in: 1...3)).map { _ in input.byte() % 4 }
    }
    let strip = input.bool()
    let failFast = input.bool()
    let maxFrameLength = input.int(in: 0...255)
    let chunkSeed = input.byte()
    let stream = input.rest().map { $0 % 5 }
    DelimiterBasedFrameDecoder.check({
        DelimiterBasedFrameDecoder(maxFrameLength: maxFrameLength, delimiters: delimiters, stripDelimiter: strip,
                                   failFast: failFast)
    }, stream, chunkSeed: chunkSeed, maxBufferedBytes: maxFrameLength + 3, consumesOnNil: true)
    return 0
}
