import Foundation

extension SQLiteValue {
    /// A name or other lookup key, in Unicode NFC, so that names Swift finds equal (canonically
    /// equivalent) are equal in SQL too.
    package static func key(_ text: String) -> SQLiteValue { .text(text.precomposedStringWithCanonicalMapping) }

    /// A sequence or id, which SQLite keeps as a signed 64-bit integer.
    /// - Throws: ``StoreError/outOfRange(_:)`` above `Int64.max`.
    package static func sequence(_ value: UInt64) throws(StoreError) -> SQLiteValue {
        guard let integer = Int64(exactly: value) else { throw StoreError.outOfRange("sequence or id \(value) above \(Int64.max)") }
        return .integer(integer)
    }
}
