// Fuzz target: FixedLengthFrameDecoder with a frame length of 1...64 bytes.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFixedLength(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let frameLength = input.int(in: 1...64)
    let chunkSeed = input.byte()
    FixedLengthFrameDecoder.check({ FixedLengthFrameDecoder(frameLength: frameLength) }, input.rest(),
                                  chunkSeed: chunkSeed, maxBufferedBytes: frameLength)
    return 0
}
