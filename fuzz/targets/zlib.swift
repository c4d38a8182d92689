// Fuzz target: Zlib.decompress in each format with a small output bound; whatever decompresses must be
// within the bound and must survive a compress/decompress round trip.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZlib(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let format = [CompressionFormat.zlib, .gzip, .rawDeflate][input.int(in: 0...2)]
    let maxOutputBytes = input.int(in: 0...255) * 64
    guard let plain = try? Zlib.decompress(Data(input.rest()), format: format, maxOutputBytes: maxOutputBytes) else { return 0 }
    if plain.count > maxOutputBytes { fatalError("\(plain.count) bytes decompressed, bound \(maxOutputBytes)") }
    guard let again = try? Zlib.decompress(try Zlib.compress(plain, format: format), format: format,
                                           maxOutputBytes: maxOutputBytes), again == plain
    else { fatalError("compress/decompress did not round-trip \(plain.count) bytes") }
    return 0
}
