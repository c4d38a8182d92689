@testable import ChatProtocol
@testable import ChatServer
import Foundation
import Testing

/// The name rules of ``UserName`` (docs/PROTOCOL.md "Names"): what may log in, the reason for what may
/// not, and which names are the same name.
@Suite struct UserNameTests {
    /// Names people use, in several scripts, some at the limits.
    static let goodNames = [
        "ann", "bob", "user-17", "ann_b", "ann.b", "o'brien", "小明", "日本語の名前", "José", "Jose\u{301}", "Zoë",
        "Ελένη", "Иван", "Müller", "tanaka太郎", "김민준", "श्रीमती", "ann_محمد", "Nguyễn",
        String(repeating: "n", count: 32),  // 32 characters
        String(repeating: "é", count: 32),  // 32 characters and 64 bytes
        String(repeating: "明", count: 21) + "a",  // 64 bytes
        String(repeating: "小", count: 21) + "a",  // 64 bytes: ChatRefusalCodecTests.longestName
        "a\u{300}\u{301}\u{302}\u{303}\u{304}\u{306}\u{308}"  // one character of 8 code points
    ]

    @Test(arguments: goodNames) func goodNamesAreAccepted(name: String) {
        #expect(throws: Never.self) { try UserName.validate(name) }
    }

    /// Each refused name, with the exact reason.
    static let refused: [(String, UserName.Refusal)] = [
        ("", .empty),
        ("a b", .whitespace(" ")),
        ("a\tb", .whitespace("\t")),
        ("ann\u{3000}", .whitespace("\u{3000}")),
        ("a\u{1B}b", .control("\u{1B}")),
        ("a\u{85}", .whitespace("\u{85}")),
        ("ann\u{200B}", .invisible("\u{200B}")),
        ("\u{2060}ann", .invisible("\u{2060}")),
        ("\u{FEFF}ann", .invisible("\u{FEFF}")),
        ("an\u{AD}n", .invisible("\u{AD}")),
        ("\u{3164}", .invisible("\u{3164}")),
        ("\u{115F}", .invisible("\u{115F}")),
        ("\u{FFA0}ann", .invisible("\u{FFA0}")),
        ("\u{2800}", .blank("\u{2800}")),
        ("ann\u{2800}", .blank("\u{2800}")),
        ("\u{600}1", .format("\u{600}")),
        ("ａｎｎ", .notAllowed("ａ")),
        ("ann😀", .notAllowed("😀")),
        ("ann!", .notAllowed("!")),
        ("ann/bob", .notAllowed("/")),
        ("\u{E000}", .notAllowed("\u{E000}")),
        ("\u{0430}nn", .mixedScripts(["Cyrillic", "Latin"])),
        ("pαypal", .mixedScripts(["Greek", "Latin"])),
        ("user\u{661}7", .mixedDigits),
        ("a\u{301}\u{301}", .repeatedMark),
        ("i\u{307}", .hiddenDot),
        // Bytes are counted first: "a" and 500 accents is 1,001 bytes.
        ("a" + String(repeating: "\u{301}", count: 500), .tooManyBytes(1_001)),
        ("a\u{300}\u{301}\u{302}\u{303}\u{304}\u{306}\u{307}\u{308}", .overlongCharacter(position: 1, scalars: 9)),
        ("ab\u{300}\u{301}\u{302}\u{303}\u{304}\u{306}\u{307}\u{308}", .overlongCharacter(position: 2, scalars: 9)),
        (String(repeating: "n", count: 33), .tooManyCharacters(33)),
        (String(repeating: "é", count: 33), .tooManyBytes(66)),
        (String(repeating: "明", count: 21) + "ab", .tooManyBytes(65))
    ]

    @Test func refusedNamesGetTheRuleTheyBreak() {
        for (name, refusal) in Self.refused {
            #expect(throws: refusal, "\(name.unicodeScalars.map { String($0.value, radix: 16) })") { try UserName.validate(name) }
            #expect(!UserName.isValid(name))
        }
    }

    /// The details the server sends with `invalidName`.
    @Test func reasonsNameTheCharacter() {
        #expect(UserName.Refusal.invisible("\u{3164}").description == "a name cannot contain invisible characters (U+3164 HANGUL FILLER)")
        #expect(
            UserName.Refusal.blank("\u{2800}").description
                == "a name cannot contain characters that look blank (U+2800 BRAILLE PATTERN BLANK)")
        #expect(UserName.Refusal.control("\u{1B}").description == "a name cannot contain control characters (U+001B)")
        #expect(
            UserName.Refusal.notAllowed("ａ").description
                == "a name cannot contain U+FF41 FULLWIDTH LATIN SMALL LETTER A: only letters, marks and digits of scripts in common use, _ and ' - . : ·"
        )
        #expect(UserName.Refusal.mixedScripts(["Cyrillic", "Latin"]).description == "a name cannot mix Cyrillic and Latin letters")
        #expect(UserName.Refusal.tooManyBytes(65).description == "a name is at most 64 bytes of UTF-8, not 65")
        #expect(UserName.Refusal.tooManyCharacters(33).description == "a name is at most 32 characters, not 33")
        #expect(
            UserName.Refusal.overlongCharacter(position: 1, scalars: 501).description
                == "character 1 is made of 501 code points (at most 8)")
        #expect(UserName.Refusal.empty.description == "a name cannot be empty")
    }

    /// The same name under case folding, NFKC and confusable skeletons (the look-alikes of issue 12),
    /// and look-alikes that folding alone would hide.
    @Test func lookAlikesAreTheSameName() {
        for (first, second) in [
            ("ann", "ANN"), ("ann", "Ann"), ("ann", "\u{0430}nn"), ("ann", "ａｎｎ"), ("ann", "ANN\u{200B}"), ("m", "rn"),
            ("Ivan", "ivan"), ("Ivan", "\u{0406}van"), ("Il", "ll"), ("BOB", "B0B"), ("l1", "ll"), ("o'brien", "o\u{2019}brien"),
            ("José", "Jose\u{301}"), ("straße", "STRASSE"), ("aոn", "ann")
        ] {
            #expect(UserName.areSimilar(first, second), "\(first) / \(second)")
            #expect(UserName.areSimilar(second, first), "\(second) / \(first)")
        }
        for (first, second) in [("ann", "anne"), ("ann", "an"), ("bob", "rob"), ("bob", "b0b"), ("小明", "小朋"), ("user-17", "user-18")] {
            #expect(!UserName.areSimilar(first, second), "\(first) / \(second)")
        }
        #expect(UserName.Key("ANN").folded == "ann")
        #expect(UserName.Key("ａｎｎ").folded == "ann")
        #expect(UserName.Key("\u{0430}nn").folded == "ann")
        #expect(UserName.Key("Il").cased == "ll")
    }

    /// The weak form names in message bodies must have: every name older servers admitted passes.
    @Test func namesOnTheWireNeedOnlyAForm() {
        for name in [
            "ann", "日本語の名前", "\u{3164}", "ANN", String(repeating: "é", count: 100), "ann😀", "a" + String(repeating: "\u{301}", count: 50)
        ] {
            #expect(UserName.isWellFormed(name), "\(name)")
        }
        for name in ["", "a b", "a\tb", "a\u{200B}b", "\u{FEFF}", "a\u{85}", "a\u{2028}", "a\u{7F}", "\u{1B}[31m"] {
            #expect(!UserName.isWellFormed(name), "\(name.unicodeScalars.map { $0.value })")
        }
    }

    /// The keys depend on these rules and ICU's confusables: the version a store records with them.
    @Test func theKeyVersionNamesTheICULibrary() throws {
        let version = UserName.keyVersion
        #expect(version.hasPrefix("1 ICU "))
        let numbers = version.dropFirst("1 ICU ".count).split(separator: ".")
        #expect(numbers.count >= 2 && numbers.allSatisfy { Int($0) != nil }, "\(version)")
    }
}
