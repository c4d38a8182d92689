import CNATS
import Glibc

/// Calls `body` with a C array of `strings` (copies, valid only during the call) and its count, as
/// libnats' `const char **` + `int` parameters want them.
func withCStringArray<R, E: Error>(
    _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, Int32) throws(E) -> R
) throws(E) -> R {
    let copies = strings.map { UnsafePointer<CChar>(strdup($0)) }
    defer { for copy in copies { free(UnsafeMutableRawPointer(mutating: copy)) } }
    let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(copies.count, 1))
    defer { array.deallocate() }
    for (index, copy) in copies.enumerated() { array[index] = copy }
    return try body(array, Int32(copies.count))
}

/// Calls `body` with a C copy of `string`, or NULL when it is nil.
func withOptionalCString<R, E: Error>(_ string: String?, _ body: (UnsafePointer<CChar>?) throws(E) -> R) throws(E) -> R {
    guard let string else { return try body(nil) }
    let copy = strdup(string)
    defer { free(copy) }
    return try body(copy)
}

/// A Swift string from a C string libnats owns; nil for NULL.
func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}
