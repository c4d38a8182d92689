import Foundation
import TestSupport

/// The five payload corpora of Autobahn's groups 12 and 13 (`case12_x_x.py`, `WS_COMPRESSION_TESTDATA`),
/// made here deterministically from a seed instead of shipped: Autobahn's files (a Gutenberg text, an
/// image, a PDF, JSON and HTML) are not ours to commit. Each has the character of its original: how well
/// it compresses, and whether it goes as text (UTF-8, with multi-byte characters) or binary.
enum DeflateCorpus: String, CaseIterable, Sendable, CustomStringConvertible {
    /// 12.1 (and all of 13.x): JSON records, sent as text.
    case json
    /// 12.2: a 512×512 8-bit greyscale bitmap with its BMP header and palette (263,222 bytes), binary.
    case bitmap
    /// 12.3: German verse with umlauts and ß, sent as binary as Autobahn sends Faust.
    case germanText
    /// 12.4: an HTML page, sent as text.
    case html
    /// 12.5: a PDF-like file, mostly already-compressed (random) streams, binary.
    case pdf

    var description: String { rawValue }

    /// Autobahn's subcategory: 12.1 … 12.5 in `WS_COMPRESSION_TESTDATA_KEYS` order.
    var group: Int { Self.allCases.firstIndex(of: self).map { $0 + 1 } ?? 0 }

    /// Whether messages go as binary (Autobahn's `binary` flag), else as text.
    var isBinary: Bool { self == .bitmap || self == .germanText || self == .pdf }

    /// The corpus' bytes (UTF-8 for text) and, for text, the byte offset at which each character (Unicode
    /// scalar) starts: Autobahn slices text by characters.
    var contents: Contents {
        switch self {
        case .json: return Self.jsonText
        case .bitmap: return Self.bitmapBytes
        case .germanText: return Self.germanBytes
        case .html: return Self.htmlText
        case .pdf: return Self.pdfBytes
        }
    }

    struct Contents: Sendable {
        let bytes: [UInt8]
        /// For text, the start of each scalar in ``bytes``, then `bytes.count`; nil for binary.
        let scalarStarts: [Int]?

        init(binary: [UInt8]) {
            bytes = binary
            scalarStarts = nil
        }

        init(text: String) {
            bytes = Array(text.utf8)
            var starts: [Int] = []
            var offset = 0
            for scalar in text.unicodeScalars {
                starts.append(offset)
                offset += UTF8.width(scalar)
            }
            scalarStarts = starts + [offset]
        }

        /// Characters (text) or bytes (binary) in the corpus.
        var units: Int { scalarStarts.map { $0.count - 1 } ?? bytes.count }

        /// The byte offset of unit `index`, 0...units.
        func byteOffset(_ index: Int) -> Int { scalarStarts?[index] ?? index }
    }

    /// Autobahn's `sendOne`: `length` characters (text) or bytes (binary) from `offset`, wrapping round
    /// the corpus' end; returns the message's payload (UTF-8 for text) and the next offset.
    ///
    /// - Precondition: `length` is at most the corpus' size in units.
    func message(length: Int, from offset: Int) -> (payload: Data, next: Int) {
        let contents = contents
        precondition(length <= contents.units, "a message of \(length) is longer than the \(self) corpus")
        let end = offset + length
        let start = contents.byteOffset(offset)
        guard end > contents.units else { return (Data(contents.bytes[start..<contents.byteOffset(end)]), end % contents.units) }
        let wrapped = end - contents.units
        return (Data(contents.bytes[start...]) + Data(contents.bytes[..<contents.byteOffset(wrapped)]), wrapped)
    }

    private static let words = [
        "Habe", "nun", "ach", "Philosophie", "Juristerei", "und", "Medizin", "leider", "auch", "Theologie",
        "durchaus", "studiert", "mit", "heißem", "Bemühn", "da", "steh", "ich", "armer", "Tor", "bin", "so", "klug",
        "als", "wie", "zuvor", "Größe", "Übermut", "Äther", "Gespräch", "Straße", "schön", "für", "über", "Mädchen"
    ]

    private static func pick<T>(_ items: [T], _ random: inout SplitMix64) -> T { items[Int.random(in: 0..<items.count, using: &random)] }

    static let jsonText: Contents = {
        var random = SplitMix64(seed: 12_1)
        var text = "["
        var id = 0
        while text.utf8.count < 190_000 {
            id += 1
            let name = "\(pick(words, &random)) \(pick(words, &random))"
            let score = Double(Int.random(in: 0..<100_000, using: &random)) / 100
            text += "{\"id\":\(id),\"name\":\"\(name)\",\"email\":\"user\(id)@example.org\",\"score\":\(score),"
            text += "\"active\":\(Bool.random(using: &random)),\"tags\":[\"\(pick(words, &random))\",\"\(pick(words, &random))\"]},\n"
        }
        return Contents(text: text + "{}]")
    }()

    static let bitmapBytes: Contents = {
        var random = SplitMix64(seed: 12_2)
        let side = 512
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        let pixelOffset = 54 + 1024
        var bytes: [UInt8] = [0x42, 0x4D] + le32(pixelOffset + side * side) + le32(0) + le32(pixelOffset)
        bytes += le32(40) + le32(side) + le32(side) + [1, 0, 8, 0] + le32(0) + le32(side * side) + le32(2835) + le32(2835)
        bytes += le32(256) + le32(256)
        for grey in 0..<256 { bytes += [UInt8(grey), UInt8(grey), UInt8(grey), 0] }
        for y in 0..<side {
            for x in 0..<side {
                let shade = (x * 3 + y * 2) / 5 + ((x / 32 + y / 32) % 2) * 40 + Int(random.next() % 12)
                bytes.append(UInt8(truncatingIfNeeded: shade))
            }
        }
        return Contents(binary: bytes)
    }()

    static let germanBytes: Contents = {
        var random = SplitMix64(seed: 12_3)
        var text = ""
        while text.utf8.count < 220_000 {
            let line = (0..<Int.random(in: 4...9, using: &random)).map { _ in pick(words, &random) }.joined(separator: " ")
            text += (Bool.random(using: &random) ? "FAUST: " : "") + line + (Bool.random(using: &random) ? "!\n" : ",\n")
        }
        return Contents(binary: Array(text.utf8))
    }()

    static let htmlText: Contents = {
        var random = SplitMix64(seed: 12_4)
        var text = "<!DOCTYPE html>\n<html lang=\"de\"><head><meta charset=\"utf-8\"><title>Daten</title></head><body>\n"
        var row = 0
        while text.utf8.count < 260_000 {
            row += 1
            let cells = (0..<4).map { _ in "<td class=\"c\(Int.random(in: 0..<6, using: &random))\">\(pick(words, &random))</td>" }
            text += "<tr id=\"r\(row)\">\(cells.joined())<td><a href=\"/item/\(row)\">→ mehr</a></td></tr>\n"
        }
        return Contents(text: text + "</body></html>\n")
    }()

    static let pdfBytes: Contents = {
        var random = SplitMix64(seed: 12_5)
        var bytes = Array("%PDF-1.4\n%âãÏÓ\n".utf8)
        var object = 0
        while bytes.count < 300_000 {
            object += 1
            let length = Int.random(in: 500...6_000, using: &random)
            bytes += Array("\(object) 0 obj\n<< /Length \(length) /Filter /FlateDecode >>\nstream\n".utf8)
            bytes += random.bytes(count: length)
            bytes += Array("\nendstream\nendobj\n".utf8)
        }
        return Contents(binary: bytes + Array("%%EOF\n".utf8))
    }()
}
