// Fuzz target: EightByteHeaderFrameDecoder, plain or with a compression transform.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEightByteHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let maxBodyLength = input.int(in: 0...255) * 8
    let transform: any BodyTransform = switch input.int(in: 0...3) {
    case 0: IdentityTransform()
    case 1: CompressionTransform(format: .zlib, maxDecompressedBytes: 4096)
    case 2: CompressionTransform(format: .gzip, maxDecompressedBytes: 4096)
    default: CompressionTransform(format: .rawDeflate, maxDecompressedBytes: 4096)
    }
    let chunkSeed = input.byte()
    EightByteHeaderFrameDecoder.check({ EightByteHeaderFrameDecoder(maxBodyLength: maxBodyLength, transform: transform) },
                                      input.rest(), chunkSeed: chunkSeed,
                                      maxBufferedBytes: EightByteHeaderFrame.headerLength + maxBodyLength)
    return 0
}
