import Foundation
import SocketFraming
import Testing

/// `UTF8Validator` on the UTF-8 cases of the Autobahn TestSuite's group 6 (case numbers from its published
/// case list) and Unicode §3.9 Table 3-7's boundaries: where the first invalid byte is, whole and byte by
/// byte.
@Suite struct UTF8ValidatorTests {
    /// A case: its bytes and the offset of the first byte that cannot be UTF-8 (the length when the text
    /// ends inside a sequence), or nil when valid.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var firstInvalid: Int?
        var testDescription: String { name }
    }

    static let kosme: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]

    static let cases: [Case] = [
        Case(name: "6.1.1 empty", bytes: [], firstInvalid: nil),
        Case(name: "6.2.1 valid κόσμε", bytes: kosme, firstInvalid: nil),
        Case(name: "6.3.1 κόσμε ED A0 80 edited", bytes: kosme + [0xED, 0xA0, 0x80] + Array("edited".utf8), firstInvalid: 12),
        Case(name: "6.4.1 κόσμε F4 90 80 80 edited", bytes: kosme + [0xF4, 0x90, 0x80, 0x80] + Array("edited".utf8), firstInvalid: 12),
        Case(name: "6.7.1 first 1-byte 00", bytes: [0x00], firstInvalid: nil),
        Case(name: "6.7.2 first 2-byte C2 80", bytes: [0xC2, 0x80], firstInvalid: nil),
        Case(name: "6.7.3 first 3-byte E0 A0 80", bytes: [0xE0, 0xA0, 0x80], firstInvalid: nil),
        Case(name: "6.7.4 first 4-byte F0 90 80 80", bytes: [0xF0, 0x90, 0x80, 0x80], firstInvalid: nil),
        Case(name: "6.8.1 5-byte F8 88 80 80 80", bytes: [0xF8, 0x88, 0x80, 0x80, 0x80], firstInvalid: 0),
        Case(name: "6.8.2 6-byte FC 84 80 80 80 80", bytes: [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], firstInvalid: 0),
        Case(name: "6.9.1 last 1-byte 7F", bytes: [0x7F], firstInvalid: nil),
        Case(name: "6.9.2 last 2-byte DF BF", bytes: [0xDF, 0xBF], firstInvalid: nil),
        Case(name: "6.9.3 last 3-byte EF BF BF", bytes: [0xEF, 0xBF, 0xBF], firstInvalid: nil),
        Case(name: "6.9.4 U+10FFFF F4 8F BF BF", bytes: [0xF4, 0x8F, 0xBF, 0xBF], firstInvalid: nil),
        Case(name: "6.10.1 F7 BF BF BF", bytes: [0xF7, 0xBF, 0xBF, 0xBF], firstInvalid: 0),
        Case(name: "6.11.1 U+D7FF ED 9F BF", bytes: [0xED, 0x9F, 0xBF], firstInvalid: nil),
        Case(name: "6.11.2 U+E000 EE 80 80", bytes: [0xEE, 0x80, 0x80], firstInvalid: nil),
        Case(name: "6.11.3 U+FFFD EF BF BD", bytes: [0xEF, 0xBF, 0xBD], firstInvalid: nil),
        Case(name: "6.11.5 U+110000 F4 90 80 80", bytes: [0xF4, 0x90, 0x80, 0x80], firstInvalid: 1),
        Case(name: "6.12.1 lone continuation 80", bytes: [0x80], firstInvalid: 0),
        Case(name: "6.12.2 lone continuation BF", bytes: [0xBF], firstInvalid: 0),
        Case(name: "6.12.3 continuations 80 BF", bytes: [0x80, 0xBF], firstInvalid: 0),
        Case(name: "6.13 lonely start C0 space", bytes: [0xC0, 0x20], firstInvalid: 0),
        Case(name: "6.13 lonely start E0 space", bytes: [0xE0, 0x20], firstInvalid: 1),
        Case(name: "6.14.1 C0 at end", bytes: [0xC0], firstInvalid: 0),
        Case(name: "6.14.2 E0 80 at end", bytes: [0xE0, 0x80], firstInvalid: 1),
        Case(name: "6.14.6 DF truncated at end", bytes: [0xDF], firstInvalid: 1),
        Case(name: "6.14.7 EF BF truncated at end", bytes: [0xEF, 0xBF], firstInvalid: 2),
        Case(name: "6.14 U+10FFFF F4 8F BF truncated at end", bytes: [0xF4, 0x8F, 0xBF], firstInvalid: 3),
        Case(name: "text then a truncated sequence", bytes: Array("hello".utf8) + [0xCE], firstInvalid: 6),
        Case(name: "6.16.1 impossible FE", bytes: [0xFE], firstInvalid: 0),
        Case(name: "6.16.2 impossible FF", bytes: [0xFF], firstInvalid: 0),
        Case(name: "6.17.1 overlong / C0 AF", bytes: [0xC0, 0xAF], firstInvalid: 0),
        Case(name: "6.17.2 overlong / E0 80 AF", bytes: [0xE0, 0x80, 0xAF], firstInvalid: 1),
        Case(name: "6.17.3 overlong / F0 80 80 AF", bytes: [0xF0, 0x80, 0x80, 0xAF], firstInvalid: 1),
        Case(name: "6.18.1 max overlong C1 BF", bytes: [0xC1, 0xBF], firstInvalid: 0),
        Case(name: "6.18.2 max overlong E0 9F BF", bytes: [0xE0, 0x9F, 0xBF], firstInvalid: 1),
        Case(name: "6.18.3 max overlong F0 8F BF BF", bytes: [0xF0, 0x8F, 0xBF, 0xBF], firstInvalid: 1),
        Case(name: "6.19.1 overlong NUL C0 80", bytes: [0xC0, 0x80], firstInvalid: 0),
        Case(name: "6.19.2 overlong NUL E0 80 80", bytes: [0xE0, 0x80, 0x80], firstInvalid: 1),
        Case(name: "6.20.1 surrogate U+D800 ED A0 80", bytes: [0xED, 0xA0, 0x80], firstInvalid: 1),
        Case(name: "6.20.7 surrogate U+DFFF ED BF BF", bytes: [0xED, 0xBF, 0xBF], firstInvalid: 1),
        Case(name: "6.21.1 pair U+D800 U+DC00", bytes: [0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80], firstInvalid: 1),
        Case(name: "6.22.1 noncharacter U+FFFE EF BF BE", bytes: [0xEF, 0xBF, 0xBE], firstInvalid: nil),
        Case(name: "6.22.34 noncharacter U+10FFFF", bytes: [0xF4, 0x8F, 0xBF, 0xBF], firstInvalid: nil),
        Case(name: "ASCII run then invalid after 8-byte steps", bytes: Array("0123456789abcdef!".utf8) + [0xFF], firstInvalid: 17),
        Case(
            name: "ASCII runs around a 4-byte character",
            bytes: Array("01234567".utf8) + [0xF0, 0x9F, 0x98, 0x80] + Array("89abcdefgh".utf8), firstInvalid: nil)
    ]

    /// The first invalid offset of `bytes` fed in `chunks`, with the end-of-text check.
    static func firstInvalid(_ bytes: [UInt8], chunks: [Int]) -> Int? {
        var validator = UTF8Validator()
        var start = 0
        for size in chunks {
            let piece = Array(bytes[start..<(start + size)])
            if let index = piece.withUnsafeBytes({ validator.validate($0) }) { return start + index }
            start += size
        }
        return validator.isAtCharacterBoundary ? nil : bytes.count
    }

    @Test(arguments: cases)
    func first_invalid_byte_whole_and_byte_by_byte(_ testCase: Case) {
        #expect(Self.firstInvalid(testCase.bytes, chunks: [testCase.bytes.count]) == testCase.firstInvalid)
        #expect(Self.firstInvalid(testCase.bytes, chunks: Array(repeating: 1, count: testCase.bytes.count)) == testCase.firstInvalid)
        #expect(UTF8Validator.isValid(Data(testCase.bytes)) == (testCase.firstInvalid == nil))
    }

    @Test func every_scalar_boundary_agrees_with_swift_s_own_encoding() {
        for value in [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF] {
            let bytes = Array(String(Character(Unicode.Scalar(UInt32(value))!)).utf8)
            #expect(UTF8Validator.isValid(Data(bytes)), "U+\(String(value, radix: 16))")
        }
        // Every 2-byte lead and every second byte after E0, ED, F0, F4: Table 3-7's ranges exactly.
        for lead in 0x80...0xFF {
            let expected = (0xC2...0xDF).contains(lead)
            #expect(UTF8Validator.isValid(Data([UInt8(lead), 0x80])) == expected, "lead \(lead)")
        }
        for (lead, range) in [(0xE0, 0xA0...0xBF), (0xED, 0x80...0x9F)] as [(UInt8, ClosedRange<Int>)] {
            for second in 0x00...0xFF {
                #expect(UTF8Validator.isValid(Data([lead, UInt8(second), 0x80])) == range.contains(second))
            }
        }
        for (lead, range) in [(0xF0, 0x90...0xBF), (0xF4, 0x80...0x8F)] as [(UInt8, ClosedRange<Int>)] {
            for second in 0x00...0xFF {
                #expect(UTF8Validator.isValid(Data([lead, UInt8(second), 0x80, 0x80])) == range.contains(second))
            }
        }
    }
}
