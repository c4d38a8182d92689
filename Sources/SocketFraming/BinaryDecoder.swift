import Foundation

/// Decodes `Decodable` message models from the binary format `BinaryEncoder` writes (docs/BINARY-ENCODING.md;
/// source article 004, MISSION.md M3.7), reading fields in declaration order.
///
/// The bytes of the `BinaryEncoder` example and the value that comes out:
///
///     | 00 01 | 00 00 00 03 61 6E 6E | 00 | 01 00 00 00 07 |
///     Login(version: 1, user: "ann", admin: false, room: 7)
///
/// Malformed input is an error, never a trap, and no allocation is sized by a length the input claims
/// before the bytes it claims are there.
///
/// Errors (`BinaryCodingError`, each with the byte offset of the problem):
/// - `.unexpectedEnd(offset:neededBytes:)` when the input ends inside a value;
/// - `.invalidValue` for a Boolean or presence flag other than 0 or 1, a string that is not valid UTF-8,
///   or an 8-byte `Int` that does not fit the platform's `Int`;
/// - `.lengthTooLarge` for a length or count prefix over `maxLength`;
/// - `.trailingBytes` when bytes follow the value;
/// - `.unsupported` when a type needs a keyed container's `allKeys` (enums with associated values);
/// - `.dataCorrupted` when a type's own `init(from:)` throws (e.g. a raw value no enum case has), with the
///   offset where that value starts.
public struct BinaryDecoder: Sendable {
    /// The width of every length and count prefix; default `.uint32` (4 bytes). Must match the encoder's.
    public var lengthPrefix: BinaryLengthPrefix
    /// The most bytes a string or `Data`, and the most elements an array or dictionary, may have; default
    /// 1 MiB (1 << 20). Bounds the work a forged count of empty elements can cause.
    public var maxLength: Int

    /// Creates a decoder.
    ///
    /// - Precondition: `maxLength >= 0` (a programmer error otherwise).
    public init(lengthPrefix: BinaryLengthPrefix = .uint32, maxLength: Int = 1 << 20) {
        precondition(maxLength >= 0, "maxLength must not be negative: \(maxLength)")
        self.lengthPrefix = lengthPrefix
        self.maxLength = maxLength
    }

    /// Decodes a `T` that takes up all of `data`. Throws as the type's documentation says.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(BinaryCodingError) -> T {
        let reader = BinaryReader(bytes: [UInt8](data), lengthPrefix: lengthPrefix, maxLength: maxLength)
        let value: T
        do {
            value = try reader.decodeValue(T.self, codingPath: [])
        } catch let error as BinaryCodingError {
            throw error
        } catch {
            throw .dataCorrupted(offset: reader.offset, reason: "\(error)")
        }
        if let error = reader.deferredError { throw error }
        guard reader.offset == reader.bytes.count else {
            throw .trailingBytes(offset: reader.offset, count: reader.bytes.count - reader.offset)
        }
        return value
    }
}

/// The input shared by the decoder and all its containers, and the offset of the next byte to read.
final class BinaryReader {
    let bytes: [UInt8]
    let lengthPrefix: BinaryLengthPrefix
    let maxLength: Int
    private(set) var offset = 0
    /// An error found where the `Decoder` protocol cannot throw (a single-value `decodeNil()`), thrown by
    /// the next read.
    var deferredError: BinaryCodingError?
    /// Why the last value failed, when it failed because the format cannot express what its type needs.
    var unsupportedReason: String?

    init(bytes: [UInt8], lengthPrefix: BinaryLengthPrefix, maxLength: Int) {
        self.bytes = bytes
        self.lengthPrefix = lengthPrefix
        self.maxLength = maxLength
    }

    /// Throws unless `count` more bytes are there, and any error deferred earlier.
    private func require(_ count: Int) throws(BinaryCodingError) {
        if let deferredError { throw deferredError }
        guard count <= bytes.count - offset else { throw .unexpectedEnd(offset: offset, neededBytes: count) }
    }

    func readInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(BinaryCodingError) -> T {
        let width = MemoryLayout<T>.size
        try require(width)
        var value: T = 0
        for index in offset..<(offset + width) { value = value << 8 | T(truncatingIfNeeded: bytes[index]) }
        offset += width
        return value
    }

    /// A 0 or 1 byte: a Boolean, or an optional's presence flag.
    func readFlag(_ what: String) throws(BinaryCodingError) -> Bool {
        let start = offset
        switch try readInteger(UInt8.self) {
        case 0: return false
        case 1: return true
        case let other:
            offset = start
            throw .invalidValue(offset: start, reason: "\(what) is \(other), expected 0 or 1")
        }
    }

    func read(_ type: Bool.Type) throws(BinaryCodingError) -> Bool { try readFlag("Bool") }
    func read(_ type: Float.Type) throws(BinaryCodingError) -> Float { Float(bitPattern: try readInteger()) }
    func read(_ type: Double.Type) throws(BinaryCodingError) -> Double { Double(bitPattern: try readInteger()) }

    func read(_ type: Int.Type) throws(BinaryCodingError) -> Int {
        let start = offset
        let value = try readInteger(Int64.self)
        guard let int = Int(exactly: value) else {
            throw .invalidValue(offset: start, reason: "\(value) does not fit this platform's Int")
        }
        return int
    }

    func read(_ type: UInt.Type) throws(BinaryCodingError) -> UInt {
        let start = offset
        let value = try readInteger(UInt64.self)
        guard let uint = UInt(exactly: value) else {
            throw .invalidValue(offset: start, reason: "\(value) does not fit this platform's UInt")
        }
        return uint
    }

    /// A length or count prefix, checked against `maxLength`.
    func readLength() throws(BinaryCodingError) -> Int {
        let start = offset
        let length: UInt64 =
            switch lengthPrefix {
            case .uint8: UInt64(try readInteger(UInt8.self))
            case .uint16: UInt64(try readInteger(UInt16.self))
            case .uint32: UInt64(try readInteger(UInt32.self))
            case .uint64: try readInteger(UInt64.self)
            }
        guard length <= UInt64(maxLength) else {
            offset = start
            throw .lengthTooLarge(offset: start, length: length, maxLength: UInt64(maxLength))
        }
        return Int(length)
    }

    /// A length prefix and that many bytes.
    func readBytes() throws(BinaryCodingError) -> ArraySlice<UInt8> {
        let length = try readLength()
        try require(length)
        defer { offset += length }
        return bytes[offset..<(offset + length)]
    }

    func read(_ type: String.Type) throws(BinaryCodingError) -> String {
        let start = offset
        let utf8 = try readBytes()
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw .invalidValue(offset: start, reason: "string of \(utf8.count) bytes is not valid UTF-8")
        }
        return string
    }

    /// Reads any value: optionals by their flag, bytes and strings directly, dictionaries as entries,
    /// everything else through its `init(from:)`.
    func decodeValue<T: Decodable>(_ type: T.Type, codingPath: [any CodingKey]) throws -> T {
        if let optional = T.self as? any BinaryOptionalDecodable.Type {
            return try cast(optional.decodeOptional(from: self, codingPath: codingPath))
        }
        if T.self == Data.self { return try cast(Data(readBytes())) }
        if T.self == [UInt8].self { return try cast([UInt8](readBytes())) }
        if T.self == String.self { return try cast(read(String.self)) }
        if let primitive = try readPrimitive(T.self) { return try cast(primitive) }
        if let dictionary = T.self as? any BinaryDictionaryDecodable.Type {
            return try cast(dictionary.decodeEntries(from: self, codingPath: codingPath))
        }
        let start = offset
        do {
            return try T(from: BinaryDecoderImpl(reader: self, codingPath: codingPath))
        } catch let error as BinaryCodingError {
            throw error
        } catch {
            if let reason = unsupportedReason { throw BinaryCodingError.unsupported(offset: start, reason: reason) }
            throw BinaryCodingError.dataCorrupted(offset: start, reason: Self.describe(error))
        }
    }

    /// The value of a fixed-width primitive type read directly (arrays of them skip `init(from:)`), or
    /// nil for any other type.
    private func readPrimitive<T>(_ type: T.Type) throws(BinaryCodingError) -> Any? {
        switch type {
        case is Bool.Type: try read(Bool.self)
        case is Int8.Type: try readInteger(Int8.self)
        case is Int16.Type: try readInteger(Int16.self)
        case is Int32.Type: try readInteger(Int32.self)
        case is Int64.Type: try readInteger(Int64.self)
        case is Int.Type: try read(Int.self)
        case is UInt8.Type: try readInteger(UInt8.self)
        case is UInt16.Type: try readInteger(UInt16.self)
        case is UInt32.Type: try readInteger(UInt32.self)
        case is UInt64.Type: try readInteger(UInt64.self)
        case is UInt.Type: try read(UInt.self)
        case is Float.Type: try read(Float.self)
        case is Double.Type: try read(Double.self)
        default: nil
        }
    }

    private func cast<T>(_ value: Any) throws(BinaryCodingError) -> T {
        guard let value = value as? T else {
            throw .unsupported(offset: offset, reason: "cannot represent \(type(of: value)) as \(T.self)")
        }
        return value
    }

    /// The description a `DecodingError` carries, or the error itself.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let DecodingError.dataCorrupted(context), let DecodingError.typeMismatch(_, context),
            let DecodingError.valueNotFound(_, context), let DecodingError.keyNotFound(_, context):
            context.debugDescription
        default:
            "\(error)"
        }
    }
}

/// Lets the reader decode an `Optional` by its presence flag whatever its static type.
protocol BinaryOptionalDecodable {
    static func decodeOptional(from reader: BinaryReader, codingPath: [any CodingKey]) throws -> Self
}

extension Optional: BinaryOptionalDecodable where Wrapped: Decodable {
    static func decodeOptional(from reader: BinaryReader, codingPath: [any CodingKey]) throws -> Self {
        try reader.readFlag("presence flag") ? try reader.decodeValue(Wrapped.self, codingPath: codingPath) : nil
    }
}

/// Lets the reader decode a `Dictionary` as a count and entries.
protocol BinaryDictionaryDecodable {
    static func decodeEntries(from reader: BinaryReader, codingPath: [any CodingKey]) throws -> Self
}

extension Dictionary: BinaryDictionaryDecodable where Key: Decodable, Value: Decodable {
    static func decodeEntries(from reader: BinaryReader, codingPath: [any CodingKey]) throws -> Self {
        let count = try reader.readLength()
        var dictionary: Self = [:]
        for _ in 0..<count {
            let keyOffset = reader.offset
            let key = try reader.decodeValue(Key.self, codingPath: codingPath)
            let value = try reader.decodeValue(Value.self, codingPath: codingPath)
            guard dictionary.updateValue(value, forKey: key) == nil else {
                throw BinaryCodingError.invalidValue(offset: keyOffset, reason: "dictionary key \(key) appears twice")
            }
        }
        return dictionary
    }
}

/// The `Decoder` handed to a type's `init(from:)`: every container reads in place, in call order.
struct BinaryDecoderImpl: Decoder {
    let reader: BinaryReader
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(reader: reader, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try BinaryUnkeyedDecodingContainer(reader: reader, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(reader: reader, codingPath: codingPath)
    }
}
