import Foundation

// The containers of `BinaryEncoderImpl`. Keys are never written: a keyed container writes its values in
// the order they are encoded, which for synthesized conformances is declaration order.

struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: BinaryWriter
    let codingPath: [any CodingKey]

    /// Writes the absent flag (0), as for an optional that is nil.
    mutating func encodeNil(forKey key: Key) throws { writer.write(false) }

    mutating func encode(_ value: Bool, forKey key: Key) throws { writer.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try writer.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { writer.write(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { writer.write(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { writer.write(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { writer.write(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { writer.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try writer.encodeValue(value, codingPath: codingPath + [key])
    }

    // Optional fields: the presence flag, then the value when present. The protocol's default would write
    // nothing for nil, which no reader could tell from the next field.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try encodeOptional(value, forKey: key)
    }

    private func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try writer.encodeValue(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(writer: writer, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        BinaryUnkeyedEncodingContainer(writer: writer, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { BinaryEncoderImpl(writer: writer, codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        BinaryEncoderImpl(writer: writer, codingPath: codingPath + [key])
    }
}

/// Writes a count prefix when created and patches it after every element, so the count is right
/// whenever the container is abandoned.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let writer: BinaryWriter
    let codingPath: [any CodingKey]
    private let countOffset: Int
    private(set) var count = 0

    init(writer: BinaryWriter, codingPath: [any CodingKey]) {
        self.writer = writer
        self.codingPath = codingPath
        countOffset = writer.reserveLength()
    }

    /// Counts one more element; the count prefix is updated at once.
    private mutating func countElement() throws(BinaryCodingError) {
        count += 1
        try writer.patchLength(count, at: countOffset)
    }

    /// For the non-throwing requirements: a count overflow is thrown when encoding finishes.
    private mutating func countElementDeferringErrors() {
        do {
            try countElement()
        } catch {
            if writer.deferredError == nil { writer.deferredError = error }
        }
    }

    private var elementPath: [any CodingKey] { codingPath + [BinaryIndexKey(intValue: count)] }

    /// Writes the absent flag (0), as for an optional that is nil.
    mutating func encodeNil() throws { try countElement(); writer.write(false) }

    mutating func encode(_ value: Bool) throws { try countElement(); writer.write(value) }
    mutating func encode(_ value: String) throws { try countElement(); try writer.write(value) }
    mutating func encode(_ value: Double) throws { try countElement(); writer.write(value) }
    mutating func encode(_ value: Float) throws { try countElement(); writer.write(value) }
    mutating func encode(_ value: Int) throws { try countElement(); writer.write(value) }
    mutating func encode(_ value: Int8) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: Int128) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { try countElement(); writer.write(value) }
    mutating func encode(_ value: UInt8) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt128) throws { try countElement(); writer.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = elementPath
        try countElement()
        try writer.encodeValue(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = elementPath
        countElementDeferringErrors()
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(writer: writer, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = elementPath
        countElementDeferringErrors()
        return BinaryUnkeyedEncodingContainer(writer: writer, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = elementPath
        countElementDeferringErrors()
        return BinaryEncoderImpl(writer: writer, codingPath: path)
    }
}

struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
    let writer: BinaryWriter
    let codingPath: [any CodingKey]

    /// Writes the absent flag (0), as for an optional that is nil.
    mutating func encodeNil() throws { writer.write(false) }

    mutating func encode(_ value: Bool) throws { writer.write(value) }
    mutating func encode(_ value: String) throws { try writer.write(value) }
    mutating func encode(_ value: Double) throws { writer.write(value) }
    mutating func encode(_ value: Float) throws { writer.write(value) }
    mutating func encode(_ value: Int) throws { writer.write(value) }
    mutating func encode(_ value: Int8) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { writer.writeInteger(value) }
    mutating func encode(_ value: Int128) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { writer.write(value) }
    mutating func encode(_ value: UInt8) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { writer.writeInteger(value) }
    mutating func encode(_ value: UInt128) throws { writer.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.encodeValue(value, codingPath: codingPath) }
}

/// The coding-path key of an array element.
struct BinaryIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { intValue.map { "Index \($0)" } ?? "" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}
