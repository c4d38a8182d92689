import ChatProtocol

/// Which names may log in (``UserName/validate(_:)``) and when two names count as the same name
/// (``UserName/Key``, ``UserName/areSimilar(_:_:)``): the server's half of ``UserName``, on ICU.
///
/// Built on Unicode's security mechanisms, UTS #39 (https://unicode.org/reports/tr39/), as Debian's
/// ICU 72 implements them (Unicode 15.0): a name is an identifier of the UTS #39 identifier profile,
/// at the "moderately restrictive" level, without invisible or blank characters, and no user may have
/// a name that is the same as another's under case folding, NFKC and confusable skeletons.
extension UserName {
    /// Why a name may not log in: the first rule it breaks, in the order ``validate(_:)`` checks them.
    /// Its ``description`` is the detail of the server's `invalidName` error.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The name is empty.
        case empty
        /// The name has this many bytes of UTF-8, over ``maxBytes``.
        case tooManyBytes(Int)
        /// The name has this many characters, over ``maxCharacters``.
        case tooManyCharacters(Int)
        /// The character at this position (from 1) is made of this many code points, over
        /// ``maxScalarsPerCharacter``.
        case overlongCharacter(position: Int, scalars: Int)
        /// White space (the Unicode property White_Space: spaces of every width, tabs, line breaks).
        case whitespace(Unicode.Scalar)
        /// A control character (general category Cc: U+0000–U+001F, U+007F–U+009F).
        case control(Unicode.Scalar)
        /// A character drawn as nothing (the property Default_Ignorable_Code_Point: zero-width spaces and
        /// joiners, U+2060 WORD JOINER, U+FEFF, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0,
        /// variation selectors, soft hyphen...).
        case invisible(Unicode.Scalar)
        /// A formatting character that is not default-ignorable (general category Cf, such as
        /// U+0600 ARABIC NUMBER SIGN).
        case format(Unicode.Scalar)
        /// A character that looks blank though it is none of the above: U+2800 BRAILLE PATTERN BLANK.
        case blank(Unicode.Scalar)
        /// A character outside UTS #39's identifier profile (Identifier_Status=Allowed): emoji, symbols,
        /// most punctuation, compatibility forms such as fullwidth letters, scripts not in common use,
        /// unassigned and private-use code points.
        case notAllowed(Unicode.Scalar)
        /// Letters of these scripts mixed in a way the "moderately restrictive" level refuses: Latin
        /// may go with one other script (Chinese, Japanese and Korean with their usual companions),
        /// never with Cyrillic, Greek or Cherokee, whose letters include Latin look-alikes.
        case mixedScripts([String])
        /// Digits of two different decimal systems (such as `1` and `١`).
        case mixedDigits
        /// The same combining mark twice in a row on one letter (drawn once).
        case repeatedMark
        /// A combining dot above (U+0307) after a letter that hides it (i, j, l and their look-alikes).
        case hiddenDot

        /// The reason in words, naming the character (code point and Unicode name) where there is one.
        public var description: String {
            switch self {
            case .empty: return "a name cannot be empty"
            case .tooManyBytes(let bytes): return "a name is at most \(UserName.maxBytes) bytes of UTF-8, not \(bytes)"
            case .tooManyCharacters(let count): return "a name is at most \(UserName.maxCharacters) characters, not \(count)"
            case .overlongCharacter(let position, let scalars):
                return "character \(position) is made of \(scalars) code points (at most \(UserName.maxScalarsPerCharacter))"
            case .whitespace(let scalar): return "a name cannot contain spaces or other white space (\(Self.name(scalar)))"
            case .control(let scalar): return "a name cannot contain control characters (\(Self.name(scalar)))"
            case .invisible(let scalar): return "a name cannot contain invisible characters (\(Self.name(scalar)))"
            case .format(let scalar): return "a name cannot contain formatting characters (\(Self.name(scalar)))"
            case .blank(let scalar): return "a name cannot contain characters that look blank (\(Self.name(scalar)))"
            case .notAllowed(let scalar):
                return
                    "a name cannot contain \(Self.name(scalar)): only letters, marks and digits of scripts in common use, _ and ' - . : ·"
            case .mixedScripts(let scripts):
                return "a name cannot mix \(scripts.joined(separator: " and ")) letters"
            case .mixedDigits: return "a name cannot mix digits of different number systems"
            case .repeatedMark: return "a name cannot repeat a combining mark on one letter"
            case .hiddenDot: return "a name cannot put a dot above (U+0307) on i, j, l or a letter like them"
            }
        }

        /// `U+200B ZERO WIDTH SPACE`: the code point and, where Unicode gives one, its name.
        static func name(_ scalar: Unicode.Scalar) -> String {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return scalar.properties.name.map { "\(code) \($0)" } ?? code
        }
    }

    /// Checks `name` against the rules, in this order, and throws the first one it breaks: not empty;
    /// at most ``maxBytes`` bytes of UTF-8; no white space, control, default-ignorable, formatting or
    /// blank-looking character; at most ``maxCharacters`` characters of at most
    /// ``maxScalarsPerCharacter`` code points each; every character in UTS #39's identifier profile;
    /// then ICU's spoof checks: scripts mixed no more than "moderately restrictive" allows, digits of
    /// one system, no repeated combining mark, no hidden dot.
    ///
    /// A valid name may still be taken: compare its ``Key`` with the users'.
    /// - Throws: the ``Refusal``.
    public static func validate(_ name: String) throws(Refusal) {
        guard !name.isEmpty else { throw .empty }
        let bytes = name.utf8.count
        guard bytes <= maxBytes else { throw .tooManyBytes(bytes) }
        let security = UnicodeSecurity.shared
        for scalar in name.unicodeScalars {
            if let refusal = invisibleRefusal(scalar, security) { throw refusal }
        }
        var count = 0
        for character in name {
            count += 1
            let scalars = character.unicodeScalars.count
            guard scalars <= maxScalarsPerCharacter else { throw .overlongCharacter(position: count, scalars: scalars) }
        }
        guard count <= maxCharacters else { throw .tooManyCharacters(count) }
        if let outside = name.unicodeScalars.first(where: { !security.isInProfile($0) }) { throw .notAllowed(outside) }
        let failed = security.failedChecks(name)
        if failed == 0 { return }
        if failed & UnicodeSecurity.mixedNumbers != 0 { throw .mixedDigits }
        if failed & UnicodeSecurity.invisible != 0 { throw .repeatedMark }
        if failed & UnicodeSecurity.hiddenOverlay != 0 { throw .hiddenDot }
        var scripts: [String] = []
        for scalar in name.unicodeScalars {
            if let script = security.scriptName(scalar), !scripts.contains(script) { scripts.append(script) }
        }
        throw .mixedScripts(scripts.sorted())
    }

    /// Whether `name` may log in (``validate(_:)`` throws nothing).
    public static func isValid(_ name: String) -> Bool {
        do {
            try validate(name)
            return true
        } catch {
            return false
        }
    }

    /// The white space, control, default-ignorable, formatting or blank refusal for `scalar`, if any.
    private static func invisibleRefusal(_ scalar: Unicode.Scalar, _ security: UnicodeSecurity) -> Refusal? {
        if scalar.isASCII {
            // White space: tab, line feed, vertical tab, form feed, carriage return, space.
            if (0x09...0x0D).contains(scalar.value) || scalar == " " { return .whitespace(scalar) }
            return scalar.value < 0x20 || scalar.value == 0x7F ? .control(scalar) : nil
        }
        let properties = scalar.properties
        if properties.isWhitespace { return .whitespace(scalar) }
        if properties.generalCategory == .control { return .control(scalar) }
        if security.isDefaultIgnorable(scalar) { return .invisible(scalar) }
        if properties.generalCategory == .format { return .format(scalar) }
        if scalar == "\u{2800}" { return .blank(scalar) }
        return nil
    }

    /// What names are compared by: two names are the same name when either part of their keys is
    /// equal (``areSimilar(_:_:)``).
    public struct Key: Hashable, Sendable {
        /// UTS #39's skeleton of the name in NFKC_Casefold: the same for names equal under Unicode case
        /// folding (`ANN`, `ann`), compatibility forms (`ａｎｎ`, `ann`) and confusables (Cyrillic `аnn`,
        /// `ann`; `rn`, `m`). The canonical key the stores index users by.
        public let folded: String
        /// The skeleton of the name in NFKC, without case folding: catches look-alikes that folding
        /// hides, between a capital and another letter (`Il` and `ll`, `B0B` and `BOB`).
        public let cased: String

        /// The key of `name`, whatever it is (valid or not).
        public init(_ name: String) {
            let security = UnicodeSecurity.shared
            folded = security.skeleton(of: security.normalized(name, folding: true))
            cased = security.skeleton(of: security.normalized(name, folding: false))
        }

        /// Whether the names of the two keys are the same name: either part equal.
        public func matches(_ other: Key) -> Bool { folded == other.folded || cased == other.cased }
    }

    /// Whether `first` and `second` are the same name for the chat (their keys match): one cannot log
    /// in next to the other.
    public static func areSimilar(_ first: String, _ second: String) -> Bool { Key(first).matches(Key(second)) }

    /// What the keys depend on: the rules' version here and the ICU library's (its confusables
    /// table), such as `"1 ICU 72.1"`. A store that keeps keys computes them again when this changes.
    public static var keyVersion: String { "1 ICU \(UnicodeSecurity.shared.icuVersion)" }
}
