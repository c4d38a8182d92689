/// The character classes of HTTP's grammar (RFC 9110 §5.6, RFC 5234 appendix B.1), on bytes.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// tchar (RFC 9110 §5.6.2): ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// token (RFC 9110 §5.6.2): one or more tchar.
    static func isToken(_ bytes: some Collection<UInt8>) -> Bool { !bytes.isEmpty && bytes.allSatisfy(isTokenCharacter) }

    /// token, on a string.
    static func isToken(_ string: String) -> Bool { isToken(string.utf8) }

    /// SP or HTAB (RFC 9110 §5.6.3 OWS).
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// A byte a field value may hold (RFC 9110 §5.5): VCHAR, obs-text, SP, HTAB; no other control.
    static func isFieldValueByte(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x7F || byte == tab }

    /// VCHAR (RFC 5234): visible ASCII, 0x21–0x7E.
    static func isVisible(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) }

    /// ASCII DIGIT.
    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// The ASCII lower case of `byte`; other bytes unchanged.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
    }
}
