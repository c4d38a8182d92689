// Fuzz target: BinaryDecoder on a model with every kind of field. The format is canonical, so whatever
// decodes must re-encode to exactly the input bytes; dictionaries (whose order is free) are checked by
// value.
import Foundation
import SocketFraming

struct FuzzLogin: Codable, Equatable {
    var version: UInt16
    var user: String
    var admin: Bool
    var room: Int32?
}

enum FuzzKind: UInt8, Codable { case text = 1, image = 2 }

struct FuzzMessage: Codable {
    var id: UInt64
    var from: FuzzLogin
    var kind: FuzzKind
    var tags: [String]
    var scores: [Int16?]
    var reply: FuzzLogin?
    var nested: Int32??
    var ratio: Double
    var small: Float
    var big: Int128
    var blob: Data
    var matrix: [[UInt8]]
    var flags: [Bool]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let prefix = BinaryLengthPrefix.allCases[input.int(in: 0...3)]
    let decoder = BinaryDecoder(lengthPrefix: prefix, maxLength: 4096)
    let encoder = BinaryEncoder(lengthPrefix: prefix)
    let bytes = Data(input.rest())
    if let message = try? decoder.decode(FuzzMessage.self, from: bytes) {
        guard let again = try? encoder.encode(message), again == bytes else {
            fatalError("a decoded message did not re-encode to its \(bytes.count) bytes")
        }
    }
    if let map = try? decoder.decode([String: [UInt8]].self, from: bytes) {
        guard let again = try? decoder.decode([String: [UInt8]].self, from: try encoder.encode(map)), again == map else {
            fatalError("a decoded dictionary of \(map.count) entries did not round-trip")
        }
    }
    return 0
}
