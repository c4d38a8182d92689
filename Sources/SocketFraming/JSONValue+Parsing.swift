import Foundation

extension JSONValue {
    /// The most arrays and objects a parsed value may nest: 512. Deeper input is invalid rather than a
    /// risk to the stack.
    static let maxParsingDepth = 512

    /// Parses one JSON text (RFC 8259): a value with optional whitespace around it, UTF-8. Returns nil
    /// for anything else: bad syntax, invalid UTF-8, a lone surrogate escape, a number out of `Double`'s
    /// range, nesting deeper than `maxParsingDepth`, or bytes after the value. Duplicate object keys keep
    /// the last value. Runs in one pass, linear in `json.count`.
    static func parse(_ json: Data) -> JSONValue? {
        json.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes)
            guard let value = parser.parseValue(depth: 0) else { return nil }
            parser.skipWhitespace()
            return parser.index == bytes.count ? value : nil
        }
    }
}

/// A recursive-descent parser over UTF-8 bytes, following RFC 8259's grammar.
private struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
        index += count
        return true
    }

    mutating func parseValue(depth: Int) -> JSONValue? {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "{"): return parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return parseString().map(JSONValue.string)
        case UInt8(ascii: "t"): return consume("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return consume("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return consume("null") ? .null : nil
        default: return parseNumber().map(JSONValue.number)
        }
    }

    private mutating func parseObject(depth: Int) -> JSONValue? {
        guard depth <= JSONValue.maxParsingDepth else { return nil }
        index += 1  // {
        var object: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let key = parseString() else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let value = parseValue(depth: depth) else { return nil }
            object[key] = value
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(object)
            default: return nil
            }
        }
    }

    private mutating func parseArray(depth: Int) -> JSONValue? {
        guard depth <= JSONValue.maxParsingDepth else { return nil }
        index += 1  // [
        var array: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            guard let value = parseValue(depth: depth) else { return nil }
            array.append(value)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(array)
            default: return nil
            }
        }
    }

    /// A string from its opening quote; validates UTF-8 and decodes escapes.
    private mutating func parseString() -> String? {
        index += 1  // "
        var utf8: [UInt8] = []
        var runStart = index
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                utf8.append(contentsOf: bytes[runStart..<index])
                index += 1
                return String(validating: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                utf8.append(contentsOf: bytes[runStart..<index])
                index += 1
                guard parseEscape(into: &utf8) else { return nil }
                runStart = index
            case 0x00..<0x20:
                return nil  // control characters must be escaped
            default:
                index += 1
            }
        }
        return nil  // no closing quote
    }

    /// One escape after its backslash, appended as UTF-8.
    private mutating func parseEscape(into utf8: inout [UInt8]) -> Bool {
        guard let byte = current else { return false }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            guard let unit = parseHex4() else { return false }
            var scalarValue = UInt32(unit)
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate must be followed by an escaped low one.
                guard consume("\\u"), let low = parseHex4(), (0xDC00..<0xE000).contains(low) else { return false }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { return false }
            utf8.append(contentsOf: String(Character(scalar)).utf8)
        default:
            return false
        }
        return true
    }

    private mutating func parseHex4() -> UInt16? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, converted by `Double(_:)`; nil when the
    /// syntax is wrong or the value is beyond `Double`'s range.
    private mutating func parseNumber() -> Double? {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { return nil }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { return nil }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { return nil }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }
}
