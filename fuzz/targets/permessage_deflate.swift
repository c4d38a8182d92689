// Fuzz target: permessage-deflate's Decompressor (RFC 7692 §7.2.2) on up to four messages in a row with a
// small message limit. Each message's inflated bytes must be within the limit. With a 32 KiB window, the
// messages cut into two fragments each must inflate to the same bytes as whole, and fail at the same
// message. With the configured window, what inflates (whole or cut) must equal the 32 KiB window's bytes:
// zlib's inflate checks a distance against the history it keeps plus the current call's output, so data
// reaching past a small window may pass whole and fail cut, but never inflate differently. What inflates
// must survive a compress/decompress round trip.
import Foundation
import SocketFraming

/// A decompressor fed each message whole or in two fragments, until its first error.
struct Reader {
    let decompressor: PerMessageDeflate.Decompressor
    var failed = false

    /// The message's bytes, or nil after an error (this one or an earlier one).
    mutating func read(_ message: Data, cutAt cut: Int?, maxMessageBytes: Int) -> Data? {
        guard !failed else { return nil }
        let inflated: Data?
        if let cut {
            inflated = try? decompressor.decompress(fragment: message.prefix(cut), isFinal: false, maxMessageBytes: maxMessageBytes)
                + decompressor.decompress(fragment: message.dropFirst(cut), isFinal: true, maxMessageBytes: maxMessageBytes)
        } else {
            inflated = try? decompressor.decompress(message, maxMessageBytes: maxMessageBytes)
        }
        failed = inflated == nil
        if let inflated, inflated.count > maxMessageBytes { fatalError("\(inflated.count) bytes inflated, limit \(maxMessageBytes)") }
        return inflated
    }
}

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

    func reader(_ bits: Int) -> Reader {
        Reader(decompressor: PerMessageDeflate.Decompressor(windowBits: bits, noContextTakeover: noContextTakeover))
    }
    var (wideWhole, wideCut, whole, cut) = (reader(15), reader(15), reader(windowBits), reader(windowBits))
    var plain: [Data] = []
    for (index, message) in messages.enumerated() {
        let at = message.isEmpty ? 0 : (cutSeed * (index + 1)) % (message.count + 1)
        let expected = wideWhole.read(message, cutAt: nil, maxMessageBytes: maxMessageBytes)
        let wideFragmented = wideCut.read(message, cutAt: at, maxMessageBytes: maxMessageBytes)
        guard wideFragmented == expected else {
            fatalError("32 KiB window, message \(index) cut at \(at) of \(message.count): \(String(describing: wideFragmented?.count)) "
                + "bytes, whole \(String(describing: expected?.count))")
        }
        for (name, inflated) in [
            ("whole", whole.read(message, cutAt: nil, maxMessageBytes: maxMessageBytes)),
            ("cut", cut.read(message, cutAt: at, maxMessageBytes: maxMessageBytes))
        ] where inflated != nil && inflated != expected {
            fatalError("\(windowBits)-bit window, message \(index) \(name): \(inflated?.count ?? 0) bytes, 32 KiB window "
                + "\(String(describing: expected?.count))")
        }
        if !whole.failed, let expected { plain.append(expected) }
    }

    let compressor = PerMessageDeflate.Compressor(windowBits: windowBits, noContextTakeover: noContextTakeover)
    var check = reader(windowBits)
    for message in plain where check.read(compressor.compress(message), cutAt: nil, maxMessageBytes: maxMessageBytes) != message {
        fatalError("compress/decompress did not round-trip \(message.count) bytes")
    }
    return 0
}
