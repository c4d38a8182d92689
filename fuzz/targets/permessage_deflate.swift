// Fuzz target: permessage-deflate's Decompressor (RFC 7692 §7.2.2) on up to four messages in a row with a
// small message limit. Each message's inflated bytes must be within the limit; the same messages cut into
// two fragments each must inflate to the same bytes and fail at the same message; what inflates must
// inflate the same with a 32 KiB window, and must survive a compress/decompress round trip.
import Foundation
import SocketFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPerMessageDeflate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let windowBits = input.int(in: 8...15)
    let noContextTakeover = input.bool()
    let maxMessageBytes = input.int(in: 0...255) * 64
    let cutSeed = Int(input.byte())
    var messages: [Data] = []
    for _ in 0..<3 { messages.append(Data(input.take(input.int(in: 0...255)))) }
    messages.append(Data(input.rest()))

    func decompressor(_ bits: Int = windowBits) -> PerMessageDeflate.Decompressor {
        PerMessageDeflate.Decompressor(windowBits: bits, noContextTakeover: noContextTakeover)
    }
    let whole = decompressor()
    let cut = decompressor()
    let wide = decompressor(15)
    var plain: [Data] = []
    for (index, message) in messages.enumerated() {
        let inflated = try? whole.decompress(message, maxMessageBytes: maxMessageBytes)
        let at = message.isEmpty ? 0 : (cutSeed * (index + 1)) % (message.count + 1)
        let fragmented = try? cut.decompress(fragment: message.prefix(at), isFinal: false, maxMessageBytes: maxMessageBytes)
            + cut.decompress(fragment: message.dropFirst(at), isFinal: true, maxMessageBytes: maxMessageBytes)
        guard fragmented == inflated else {
            fatalError("message \(index) cut at \(at) of \(message.count): \(String(describing: fragmented?.count)) bytes, "
                + "whole \(String(describing: inflated?.count))")
        }
        guard let inflated else { break }
        if inflated.count > maxMessageBytes { fatalError("\(inflated.count) bytes inflated, limit \(maxMessageBytes)") }
        guard let again = try? wide.decompress(message, maxMessageBytes: maxMessageBytes), again == inflated else {
            fatalError("a 32 KiB window inflated \(message.count) bytes differently")
        }
        plain.append(inflated)
    }

    let compressor = PerMessageDeflate.Compressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
    let check = decompressor()
    for message in plain {
        guard let again = try? check.decompress(compressor.compress(message), maxMessageBytes: maxMessageBytes), again == message else {
            fatalError("compress/decompress did not round-trip \(message.count) bytes")
        }
    }
    return 0
}
