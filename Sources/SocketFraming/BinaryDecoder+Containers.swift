import Foundation

// The containers of `BinaryDecoderImpl`. Keys are never read: a keyed container reads values in the
// order they are asked for, which for synthesized conformances is declaration order.

struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: BinaryReader
    let codingPath: [any CodingKey]

    /// Keys are not on the wire, so they cannot be listed: asking is recorded, and the decoding error
    /// that follows (from an enum with associated values, say) becomes `.unsupported`.
    var allKeys: [Key] {
        reader.unsupportedReason =
            "the format has no keys, so keyed containers cannot list them (allKeys); "
            + "enums with associated values are not supported"
        return []
    }

    /// Every key is "present": absence is told by an optional's flag instead.
    func contains(_ key: Key) -> Bool { true }

    /// Reads an optional's presence flag: true (absent, nothing follows) for 0, false for 1. Consumes it
    /// either way, so `decodeIfPresent` reads the value right after.
    func decodeNil(forKey key: Key) throws -> Bool { try !reader.readFlag("presence flag") }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader.read(Bool.self) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader.read(String.self) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader.read(Double.self) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader.read(Float.self) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader.read(Int.self) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader.readInteger(Int8.self) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader.readInteger(Int16.self) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader.readInteger(Int32.self) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader.readInteger(Int64.self) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try reader.readInteger(Int128.self) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader.read(UInt.self) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader.readInteger(UInt8.self) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader.readInteger(UInt16.self) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader.readInteger(UInt32.self) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader.readInteger(UInt64.self) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try reader.readInteger(UInt128.self) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try reader.decodeValue(T.self, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(BinaryKeyedDecodingContainer<NestedKey>(reader: reader, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try BinaryUnkeyedDecodingContainer(reader: reader, codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder { BinaryDecoderImpl(reader: reader, codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        BinaryDecoderImpl(reader: reader, codingPath: codingPath + [key])
    }
}

/// Reads the count prefix when created; `isAtEnd` once that many elements have been read.
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let reader: BinaryReader
    let codingPath: [any CodingKey]
    let count: Int?
    private(set) var currentIndex = 0

    init(reader: BinaryReader, codingPath: [any CodingKey]) throws {
        self.reader = reader
        self.codingPath = codingPath
        count = try reader.readLength()
    }

    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    /// Throws `DecodingError.valueNotFound` past the last element; counts one element.
    private mutating func nextElement<T>(_ type: T.Type) throws {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                T.self,
                DecodingError.Context(
                    codingPath: codingPath, debugDescription: "unkeyed container is at its end (\(count ?? 0) elements)"))
        }
        currentIndex += 1
    }

    /// Reads an optional's presence flag: true (absent, the element is done) for 0, false (the value
    /// follows) for 1.
    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let isNil = try !reader.readFlag("presence flag")
        if isNil { currentIndex += 1 }
        return isNil
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try nextElement(type); return try reader.read(Bool.self) }
    mutating func decode(_ type: String.Type) throws -> String { try nextElement(type); return try reader.read(String.self) }
    mutating func decode(_ type: Double.Type) throws -> Double { try nextElement(type); return try reader.read(Double.self) }
    mutating func decode(_ type: Float.Type) throws -> Float { try nextElement(type); return try reader.read(Float.self) }
    mutating func decode(_ type: Int.Type) throws -> Int { try nextElement(type); return try reader.read(Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try nextElement(type); return try reader.readInteger(Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try nextElement(type); return try reader.readInteger(Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try nextElement(type); return try reader.readInteger(Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try nextElement(type); return try reader.readInteger(Int64.self) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try nextElement(type); return try reader.readInteger(Int128.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try nextElement(type); return try reader.read(UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try nextElement(type); return try reader.readInteger(UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try nextElement(type); return try reader.readInteger(UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try nextElement(type); return try reader.readInteger(UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try nextElement(type); return try reader.readInteger(UInt64.self) }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try nextElement(type); return try reader.readInteger(UInt128.self) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = codingPath + [BinaryIndexKey(intValue: currentIndex)]
        try nextElement(type)
        return try reader.decodeValue(T.self, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = codingPath + [BinaryIndexKey(intValue: currentIndex)]
        try nextElement(type)
        return KeyedDecodingContainer(BinaryKeyedDecodingContainer<NestedKey>(reader: reader, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = codingPath + [BinaryIndexKey(intValue: currentIndex)]
        try nextElement([Any].self)
        return try BinaryUnkeyedDecodingContainer(reader: reader, codingPath: path)
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = codingPath + [BinaryIndexKey(intValue: currentIndex)]
        try nextElement((any Decoder).self)
        return BinaryDecoderImpl(reader: reader, codingPath: path)
    }
}

struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let reader: BinaryReader
    let codingPath: [any CodingKey]

    /// Reads an optional's presence flag: true (absent) for 0, false (the value follows) for 1. This
    /// requirement cannot throw, so a bad flag is thrown by the next read instead.
    func decodeNil() -> Bool {
        do {
            return try !reader.readFlag("presence flag")
        } catch {
            if reader.deferredError == nil { reader.deferredError = error }
            return false
        }
    }

    func decode(_ type: Bool.Type) throws -> Bool { try reader.read(Bool.self) }
    func decode(_ type: String.Type) throws -> String { try reader.read(String.self) }
    func decode(_ type: Double.Type) throws -> Double { try reader.read(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { try reader.read(Float.self) }
    func decode(_ type: Int.Type) throws -> Int { try reader.read(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try reader.readInteger(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try reader.readInteger(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try reader.readInteger(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try reader.readInteger(Int64.self) }
    func decode(_ type: Int128.Type) throws -> Int128 { try reader.readInteger(Int128.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try reader.read(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.readInteger(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.readInteger(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.readInteger(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.readInteger(UInt64.self) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try reader.readInteger(UInt128.self) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try reader.decodeValue(T.self, codingPath: codingPath) }
}
