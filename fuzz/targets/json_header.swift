// Fuzz target: JSONHeaderFrameDecoder with small header and body limits.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let maxHeaderLength = input.int(in: 0...255) * 4
    let maxBodyLength = input.int(in: 0...255) * 4
    let chunkSeed = input.byte()
    JSONHeaderFrameDecoder.check({ JSONHeaderFrameDecoder(maxHeaderLength: maxHeaderLength, maxBodyLength: maxBodyLength) },
                                 input.rest(), chunkSeed: chunkSeed, maxBufferedBytes: maxHeaderLength + 2 + maxBodyLength)
    return 0
}
