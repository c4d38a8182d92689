// Fuzz target: SevenByteHeaderFrameDecoder, compressed bodies in each format, a small decompression bound,
// and each kind of header check: any version, the default [1], versions 1–3, versions 1–3 with known
// function codes 3, 4 and (in version 2 only) 10.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSevenByteHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let format = [CompressionFormat.zlib, .gzip, .rawDeflate][input.int(in: 0...2)]
    let maxDecompressed = input.int(in: 0...255) * 16
    let chunkSeed = input.byte()
    let headerCheck = input.int(in: 0...3)
    let versionChoices: [Set<UInt16>?] = [nil, SevenByteHeaderFrameDecoder.defaultAcceptedVersions, [1, 2, 3], [1, 2, 3]]
    let versions = versionChoices[headerCheck]
    let knownCodeSet: Set<UInt16> = [3, 4, 10]
    var knownCodes: (@Sendable (UInt16, UInt16) -> Bool)?
    if headerCheck == 3 { knownCodes = { code, version in knownCodeSet.contains(code) && (code != 10 || version == 2) } }
    SevenByteHeaderFrameDecoder.check({
        SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: maxDecompressed, compressionFormat: format,
                                    acceptedVersions: versions, isKnownFunctionCode: knownCodes)
    }, input.rest(), chunkSeed: chunkSeed, maxBufferedBytes: SevenByteHeaderFrame.headerLength + SevenByteHeaderFrame.maxWireBodyLength)
    return 0
}
