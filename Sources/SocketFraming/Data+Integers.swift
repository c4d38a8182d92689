import Foundation

extension Data {
    /// Appends the low `byteCount` bytes of `value` in `byteOrder`.
    mutating func appendInteger(_ value: UInt64, byteCount: Int, byteOrder: ByteOrder) {
        for index in 0..<byteCount {
            let shift = byteOrder == .bigEndian ? (byteCount - 1 - index) * 8 : index * 8
            append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
