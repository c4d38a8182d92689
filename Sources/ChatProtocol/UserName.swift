/// The chat's rules for user names (docs/PROTOCOL.md "Names"): their bounds and the weak form every
/// name in a message body must have (``isWellFormed(_:)``), here; which names may log in
/// (`validate(_:)`) and when two names count as the same name (`Key`, `areSimilar(_:_:)`) are the
/// server's, in ChatServer, on ICU.
///
/// Every function may be called from any thread.
public enum UserName {
    /// The most characters a name has: 32 extended grapheme clusters (UAX #29, as Swift counts
    /// `Character`s), what the server always allowed.
    public static let maxCharacters = 32
    /// The most bytes a name has in UTF-8, as sent: 64. Enough for 32 characters of Latin, Greek or
    /// Cyrillic with accents (2 bytes each) and for 21 of Chinese, Japanese, Korean or the Indic
    /// scripts (3 bytes each; personal names are far shorter); it keeps every message that carries
    /// names small (a delivery names up to three users, a `who` page up to 100: at most 6.4 KB of names).
    public static let maxBytes = 64
    /// The most Unicode code points one character (grapheme cluster) of a name is made of: 8. The
    /// longest clusters of names in living scripts are Indic conjuncts with a vowel sign (स्त्री, 6 code
    /// points: one character under UAX #29's conjunct rule) and Tibetan stacks (5); a letter under a
    /// tower of combining marks ("a" and 500 accents is one character) is refused.
    public static let maxScalarsPerCharacter = 8

    /// The form a user name in a message body must have (docs/PROTOCOL.md "Names"): not empty, and no
    /// white space, control or formatting character (Cc, Cf). Much weaker than the server's `validate(_:)` and
    /// met by every name a server of any version let log in, so a receiver refuses only what is
    /// malformed; a scan of the bytes (printable ASCII is decided byte by byte), without ICU.
    public static func isWellFormed(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isWellFormed(utf8: $0) }
    }

    /// ``isWellFormed(_:)`` for the UTF-8 bytes of a name (valid UTF-8: part of a `String`).
    static func isWellFormed(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        for byte in bytes where byte <= 0x20 || byte >= 0x7F {
            // Not printable ASCII: decide per code point.
            return String(decoding: bytes, as: UTF8.self).unicodeScalars.allSatisfy { scalar in
                if scalar.isASCII { return scalar.value > 0x20 && scalar.value != 0x7F }
                let properties = scalar.properties
                return !properties.isWhitespace && properties.generalCategory != .control && properties.generalCategory != .format
            }
        }
        return true
    }
}
