/// A resume token or a client instance id, as a logged-in user's record keeps it (internal): the 128
/// bits of the two usual forms inline, without a heap block, and any other text as it came.
///
/// - `uuid`: a UUID in Foundation's `uuidString` form, 36 characters: 8-4-4-4-12 uppercase hexadecimal
///   digits (the resume tokens the server makes).
/// - `hex`: 32 lowercase hexadecimal digits (the client instances of docs/PROTOCOL.md, as im-client and
///   the web client make them).
/// - `text`: anything else, kept as the `String` it was.
///
/// ``string`` gives back exactly the text it was made from (the same characters, the same case), so
/// comparisons and hashes of that text are unchanged. A `String` of 16 bytes or more costs a heap block
/// of 48–80 bytes; these two forms cost none.
enum CompactToken: Equatable, Sendable {
    case uuid(high: UInt64, low: UInt64)
    case hex(high: UInt64, low: UInt64)
    case text(String)

    /// `text`, in the smallest form that gives it back unchanged.
    init(_ text: String) {
        var utf8 = text.utf8
        if utf8.count == 32, let (high, low) = CompactToken.digits(of: &utf8, uppercase: false, dashes: false) {
            self = .hex(high: high, low: low)
        } else if utf8.count == 36, let (high, low) = CompactToken.digits(of: &utf8, uppercase: true, dashes: true) {
            self = .uuid(high: high, low: low)
        } else {
            self = .text(text)
        }
    }

    /// The text it was made from.
    var string: String {
        switch self {
        case .text(let text): return text
        case .hex(let high, let low): return CompactToken.format(high, low, uppercase: false, dashes: false)
        case .uuid(let high, let low): return CompactToken.format(high, low, uppercase: true, dashes: true)
        }
    }

    /// Whether `text` is the text it was made from.
    func matches(_ text: String) -> Bool { self == CompactToken(text) }

    /// The dashes of the `uuidString` form come after these many digits.
    private static let dashesAfter: Set<Int> = [8, 12, 16, 20]

    /// The 32 digits of `utf8` (with dashes where a `uuidString` has them when `dashes`) as two 64-bit
    /// halves, most significant digit first; nil when a byte is not such a digit of the given case.
    private static func digits(of utf8: inout String.UTF8View, uppercase: Bool, dashes: Bool) -> (UInt64, UInt64)? {
        var high: UInt64 = 0, low: UInt64 = 0, count = 0
        var expectDash = false
        for byte in utf8 {
            if expectDash {
                guard byte == UInt8(ascii: "-") else { return nil }
                expectDash = false
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f") where !uppercase: value = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F") where uppercase: value = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if count < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            count += 1
            if dashes && dashesAfter.contains(count) { expectDash = true }
        }
        return count == 32 && !expectDash ? (high, low) : nil
    }

    /// The 32 digits of `high` and `low`, in the given case, with a `uuidString`'s dashes when `dashes`.
    private static func format(_ high: UInt64, _ low: UInt64, uppercase: Bool, dashes: Bool) -> String {
        let alphabet = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        for index in 0..<32 {
            let half = index < 16 ? high : low
            let shift = UInt64(15 - index % 16) * 4
            bytes.append(alphabet[Int(half >> shift & 0xF)])
            if dashes && dashesAfter.contains(index + 1) { bytes.append(UInt8(ascii: "-")) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
