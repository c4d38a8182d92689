// Fuzz target: permessage-deflate's Decompressor (RFC 7692 §7.2.2) on up to four messages in a row with a
// small message limit. Each message's inflated bytes must be within the limit; what inflates must inflate
// the same with a 32 KiB window, and must survive a compress/decompress round trip with the same settings.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPerMessageDeflate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let windowBits = input.int(in: 8...15)
    let noContextTakeover = input.bool()
    let maxMessageBytes = input.int(in: 0...255) * 64
    var messages: [Data] = []
    for _ in 0..<3 { messages.append(Data(input.take(input.int(in: 0...255)))) }
    messages.append(Data(input.rest()))

    let decompressor = PerMessageDeflate.Decompressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
    let wide = PerMessageDeflate.Decompressor(windowBits: 15, noContextTakeover: noContextTakeover)
    var plain: [Data] = []
    for message in messages {
        guard let inflated = try? decompressor.decompress(message, maxMessageBytes: maxMessageBytes) else { break }
        if inflated.count > maxMessageBytes { fatalError("\(inflated.count) bytes inflated, limit \(maxMessageBytes)") }
        guard let again = try? wide.decompress(message, maxMessageBytes: maxMessageBytes), again == inflated else {
            fatalError("a 32 KiB window inflated \(message.count) bytes differently")
        }
        plain.append(inflated)
    }

    let compressor = PerMessageDeflate.Compressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
    let check = PerMessageDeflate.Decompressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
    for message in plain {
        guard let again = try? check.decompress(compressor.compress(message), maxMessageBytes: maxMessageBytes), again == message else {
            fatalError("compress/decompress did not round-trip \(message.count) bytes")
        }
    }
    return 0
}
