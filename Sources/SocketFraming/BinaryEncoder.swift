import Foundation

/// Encodes `Encodable` message models into the compact binary format of docs/BINARY-ENCODING.md: the
/// field-by-field encoding of source article 004 (MISSION.md M3.7), done with `Codable` instead of
/// reflection.
///
/// Fields go out in declaration order (the order synthesized `encode(to:)` writes them), with no names,
/// tags or padding:
///
///     struct Login: Codable { var version: UInt16; var user: String; var admin: Bool; var room: Int32? }
///     Login(version: 1, user: "ann", admin: false, room: 7)
///
///     | 00 01 | 00 00 00 03 61 6E 6E | 00 | 01 00 00 00 07 |
///       version  user (length, UTF-8)  admin  room (present, Int32)
///
/// - Integers: `Int8`…`Int64`, `UInt8`…`UInt64` in their width, `Int128`/`UInt128` in 16 bytes, all
///   big-endian (network byte order), signed ones in two's complement; `Int` and `UInt` as 8 bytes.
/// - `Bool`: 1 byte, 0 or 1. `Float`, `Double`: IEEE 754 binary32 / binary64 bits, big-endian.
/// - `String`: its UTF-8 byte count as a `lengthPrefix`, then the bytes. `Data` and `[UInt8]`: the same
///   with raw bytes.
/// - Arrays (and any unkeyed container): the element count as a `lengthPrefix`, then the elements.
/// - Optionals: 1 byte, 0 (absent, nothing follows) or 1 (present, the value follows).
/// - Dictionaries: the entry count as a `lengthPrefix`, then key, value, key, value… in the dictionary's
///   own (unspecified) order.
/// - Nested structs and classes: their fields in place; enums with raw values: the raw value.
///
/// Errors: `BinaryCodingError.lengthTooLarge` when a length or count does not fit `lengthPrefix`;
/// `.dataCorrupted` when a type's own `encode(to:)` throws. Every error carries the offset in the output
/// where it arose.
public struct BinaryEncoder: Sendable {
    /// The width of every length and count prefix; default `.uint32` (4 bytes).
    public var lengthPrefix: BinaryLengthPrefix

    /// Creates an encoder.
    public init(lengthPrefix: BinaryLengthPrefix = .uint32) {
        self.lengthPrefix = lengthPrefix
    }

    /// Returns the bytes of `value`. Throws as the type's documentation says.
    public func encode<T: Encodable>(_ value: T) throws(BinaryCodingError) -> Data {
        let writer = BinaryWriter(lengthPrefix: lengthPrefix)
        do {
            try writer.encodeValue(value, codingPath: [])
        } catch let error as BinaryCodingError {
            throw error
        } catch {
            throw .dataCorrupted(offset: writer.bytes.count, reason: "\(error)")
        }
        if let error = writer.deferredError { throw error }
        return Data(writer.bytes)
    }
}

/// The output shared by the encoder and all its containers.
final class BinaryWriter {
    let lengthPrefix: BinaryLengthPrefix
    var bytes: [UInt8] = []
    /// An error found where the `Encoder` protocol cannot throw (a nested container's count overflowing).
    var deferredError: BinaryCodingError?

    init(lengthPrefix: BinaryLengthPrefix) {
        self.lengthPrefix = lengthPrefix
    }

    func writeInteger<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    func write(_ value: Bool) { bytes.append(value ? 1 : 0) }
    func write(_ value: Float) { writeInteger(value.bitPattern) }
    func write(_ value: Double) { writeInteger(value.bitPattern) }
    func write(_ value: Int) { writeInteger(Int64(value)) }
    func write(_ value: UInt) { writeInteger(UInt64(value)) }

    func write(_ value: String) throws(BinaryCodingError) {
        try writeLength(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    /// Writes the length prefix, then `raw`.
    func writeBytes<Bytes: Collection<UInt8>>(_ raw: Bytes) throws(BinaryCodingError) {
        try writeLength(raw.count)
        bytes.append(contentsOf: raw)
    }

    /// Writes `length` as a `lengthPrefix`-wide big-endian integer.
    func writeLength(_ length: Int) throws(BinaryCodingError) {
        try checkLength(length)
        writeLengthBytes(UInt64(length))
    }

    /// Reserves a length prefix to be filled in by `patchLength(_:at:)`; returns its offset.
    func reserveLength() -> Int {
        let offset = bytes.count
        writeLengthBytes(0)
        return offset
    }

    /// Overwrites the length prefix at `offset` with `length`.
    func patchLength(_ length: Int, at offset: Int) throws(BinaryCodingError) {
        try checkLength(length, prefixOffset: offset)
        let width = lengthPrefix.byteCount
        for index in 0..<width {
            bytes[offset + index] = UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(8 * (width - 1 - index)))
        }
    }

    private func checkLength(_ length: Int, prefixOffset: Int? = nil) throws(BinaryCodingError) {
        guard UInt64(length) <= lengthPrefix.maxLength else {
            throw .lengthTooLarge(
                offset: prefixOffset ?? bytes.count, length: UInt64(length),
                maxLength: lengthPrefix.maxLength)
        }
    }

    private func writeLengthBytes(_ length: UInt64) {
        switch lengthPrefix {
        case .uint8: writeInteger(UInt8(truncatingIfNeeded: length))
        case .uint16: writeInteger(UInt16(truncatingIfNeeded: length))
        case .uint32: writeInteger(UInt32(truncatingIfNeeded: length))
        case .uint64: writeInteger(length)
        }
    }

    /// Writes any value: optionals with their flag, bytes and primitives directly, dictionaries as
    /// entries, everything else through its `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        switch value {
        case let optional as any BinaryOptionalEncodable:
            if let wrapped = optional.binaryWrapped {
                write(true)
                try encodeValue(wrapped, codingPath: codingPath)
            } else {
                write(false)
            }
        case let data as Data:
            try writeBytes(data)
        case let array as [UInt8]:
            try writeBytes(array)
        case let string as String:
            try write(string)
        case let value as Bool: write(value)
        case let value as Int8: writeInteger(value)
        case let value as Int16: writeInteger(value)
        case let value as Int32: writeInteger(value)
        case let value as Int64: writeInteger(value)
        case let value as Int: write(value)
        case let value as UInt8: writeInteger(value)
        case let value as UInt16: writeInteger(value)
        case let value as UInt32: writeInteger(value)
        case let value as UInt64: writeInteger(value)
        case let value as UInt: write(value)
        case let value as Float: write(value)
        case let value as Double: write(value)
        case let dictionary as any BinaryDictionaryCodable:
            try dictionary.encodeEntries(to: self, codingPath: codingPath)
        default:
            let start = bytes.count
            do {
                try value.encode(to: BinaryEncoderImpl(writer: self, codingPath: codingPath))
            } catch let error as BinaryCodingError {
                throw error
            } catch {
                throw BinaryCodingError.dataCorrupted(offset: start, reason: "\(error)")
            }
        }
    }
}

/// Lets the writer see through an `Optional` whatever its static type.
protocol BinaryOptionalEncodable {
    /// The wrapped value, or nil.
    var binaryWrapped: (any Encodable)? { get }
}

extension Optional: BinaryOptionalEncodable where Wrapped: Encodable {
    var binaryWrapped: (any Encodable)? { self.map { $0 } }
}

/// Lets the writer and the reader treat a `Dictionary` as a count and entries instead of a keyed
/// container (whose keys this format never writes).
protocol BinaryDictionaryCodable {
    func encodeEntries(to writer: BinaryWriter, codingPath: [any CodingKey]) throws
}

extension Dictionary: BinaryDictionaryCodable where Key: Encodable, Value: Encodable {
    func encodeEntries(to writer: BinaryWriter, codingPath: [any CodingKey]) throws {
        try writer.writeLength(count)
        for (key, value) in self {
            try writer.encodeValue(key, codingPath: codingPath)
            try writer.encodeValue(value, codingPath: codingPath)
        }
    }
}

/// The `Encoder` handed to a type's `encode(to:)`: every container writes in place, in call order.
struct BinaryEncoderImpl: Encoder {
    let writer: BinaryWriter
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(writer: writer, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        BinaryUnkeyedEncodingContainer(writer: writer, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(writer: writer, codingPath: codingPath)
    }
}
