// Fuzz target: SevenByteHeaderFrameDecoder, compressed bodies in each format, a small decompression bound.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSevenByteHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let format = [CompressionFormat.zlib, .gzip, .rawDeflate][input.int(in: 0...2)]
    let maxDecompressed = input.int(in: 0...255) * 16
    let chunkSeed = input.byte()
    SevenByteHeaderFrameDecoder.check({
        SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: maxDecompressed, compressionFormat: format)
    }, input.rest(), chunkSeed: chunkSeed, maxBufferedBytes: SevenByteHeaderFrame.headerLength + SevenByteHeaderFrame.maxWireBodyLength)
    return 0
}
