import CICUShims

/// ICU's implementation of Unicode's security mechanisms (UTS #39, https://unicode.org/reports/tr39/)
/// and normalization (UAX #15), as ``UserName`` uses them: one spoof checker, configured once and then
/// only read, so every method may be called from any thread at once (ICU: "the test functions ... are
/// thread safe ... using the same USpoofChecker instance").
///
/// The checker makes ICU's restriction-level check at "moderately restrictive" with UTS #39's
/// identifier profile as the allowed characters, and its invisible, mixed-numbers and hidden-overlay
/// checks (Sources/CICUShims). Text goes to ICU and comes back as UTF-16, ICU's own encoding.
final class UnicodeSecurity: @unchecked Sendable {
    /// The one instance. Opening it cannot fail on a working installation (ICU's data is compiled into
    /// libicudata); if it does (no memory), the process stops with ICU's error name.
    static let shared = UnicodeSecurity()

    /// The version of the ICU library loaded at run time, such as "72.1": its Unicode data and its
    /// confusables table, which ``skeleton(of:)`` depends on.
    let icuVersion: String

    private let checker: OpaquePointer

    /// The bits of ``failedChecks(_:)`` (ICU's `USpoofChecks`).
    static let restrictionLevel = Int32(CICU_CHECK_RESTRICTION_LEVEL)
    static let invisible = Int32(CICU_CHECK_INVISIBLE)
    static let characterLimit = Int32(CICU_CHECK_CHAR_LIMIT)
    static let mixedNumbers = Int32(CICU_CHECK_MIXED_NUMBERS)
    static let hiddenOverlay = Int32(CICU_CHECK_HIDDEN_OVERLAY)

    private init() {
        var error: UnsafePointer<CChar>?
        guard let checker = cicu_checker_open(&error) else {
            fatalError("ICU's spoof checker could not be opened: \(error.map { String(cString: $0) } ?? "?")")
        }
        self.checker = checker
        var version = [CChar](repeating: 0, count: 24)
        cicu_version(&version)
        icuVersion = String(decoding: version.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { cicu_checker_close(checker) }

    /// Whether `scalar` is in UTS #39's identifier profile (Identifier_Status=Allowed): ICU's
    /// recommended set (letters, marks and digits of the scripts in common use, `_`) and its inclusion
    /// set (`' - . : ·` and a few script-specific punctuation marks).
    func isInProfile(_ scalar: Unicode.Scalar) -> Bool { cicu_in_profile(checker, scalar.value) }

    /// Whether `scalar` has the Unicode property Default_Ignorable_Code_Point (drawn as nothing).
    func isDefaultIgnorable(_ scalar: Unicode.Scalar) -> Bool { cicu_is_default_ignorable(scalar.value) }

    /// The long name of `scalar`'s script (`Latin`, `Cyrillic`), or nil for characters of no one script
    /// (Common, Inherited: digits, punctuation, combining marks).
    func scriptName(_ scalar: Unicode.Scalar) -> String? { cicu_script_name(scalar.value).map { String(cString: $0) } }

    /// The spoof checks `text` fails, a bit mask of ``restrictionLevel``, ``invisible``,
    /// ``characterLimit``, ``mixedNumbers`` and ``hiddenOverlay`` (0: none). An error of ICU's (none is
    /// expected for valid UTF-16) counts as failing the restriction level.
    func failedChecks(_ text: String) -> Int32 {
        let units = Array(text.utf16)
        let failed = units.withUnsafeBufferPointer { cicu_check(checker, $0.baseAddress, Int32($0.count)) }
        return failed < 0 ? Self.restrictionLevel : failed
    }

    /// `text` in Unicode normalization form NFKC, case folded too (NFKC_Casefold) when `folding`.
    func normalized(_ text: String, folding: Bool) -> String {
        Self.transformed(text) { cicu_normalize_nfkc($0, $1, folding, $2, $3) }
    }

    /// UTS #39's skeleton of `text`: NFD, each character replaced by its confusables prototype, NFD again.
    /// Two strings are confusable when their skeletons are equal. The table changes between ICU versions.
    func skeleton(of text: String) -> String {
        Self.transformed(text) { cicu_skeleton(checker, $0, $1, $2, $3) }
    }

    /// What an ICU function writing UTF-16 into a buffer makes of `text`: tried with room for four
    /// times the input, then once more with the length ICU asked for. On an error, `text` unchanged.
    private static func transformed(
        _ text: String, _ function: (UnsafePointer<UInt16>?, Int32, UnsafeMutablePointer<UInt16>?, Int32) -> Int32
    ) -> String {
        let units = Array(text.utf16)
        var capacity = units.count * 4 + 16
        for _ in 0..<2 {
            var output = [UInt16](repeating: 0, count: capacity)
            let length = units.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { function(input.baseAddress, Int32(input.count), $0.baseAddress, Int32($0.count)) }
            }
            guard length >= 0 else { break }
            if length <= capacity { return String(decoding: output[..<Int(length)], as: UTF16.self) }
            capacity = Int(length)
        }
        return text
    }
}
