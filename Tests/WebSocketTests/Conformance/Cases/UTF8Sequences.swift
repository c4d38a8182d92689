import Foundation

/// The UTF-8 test sequences of Autobahn's cases 6.5.x … 6.21.x (`case6_x_x.py`,
/// `createUtf8TestSequences`), from Markus Kuhn's UTF-8 decoder stress test
/// (http://www.cl.cam.ac.uk/~mgk25/ucs/examples/UTF-8-test.txt): categories in Autobahn's order, each
/// sequence with whether it is valid UTF-8 (hexadecimal bytes).
enum UTF8Sequences {
    struct Category {
        let name: String
        let sequences: [(valid: Bool, hex: String)]
    }

    /// κόσμε, 11 bytes: ce ba | e1 bd b9 | cf 83 | ce bc | ce b5.
    static let kosme = "cebae1bdb9cf83cebcceb5"

    static let categories: [Category] = {
        var list: [Category] = []
        let sequences1: [(valid: Bool, hex: String)] = [
            (true, "68656c6c6f24776f726c64"), (true, "68656c6c6fc2a2776f726c64"), (true, "68656c6c6fe282ac776f726c64"),
            (true, "68656c6c6ff0a4ada2776f726c64"), (true, kosme)
        ]
        list.append(Category(name: "Some valid UTF-8 sequences", sequences: sequences1))
        // Every prefix of κόσμε: valid where it ends between characters (after 2, 5, 7, 9 and 11 bytes).
        let sequences2: [(valid: Bool, hex: String)] = (1...11).map { ([2, 5, 7, 9, 11].contains($0), String(kosme.prefix(2 * $0))) }
        list.append(Category(name: "All prefixes of a valid UTF-8 string", sequences: sequences2))
        let sequences3: [(valid: Bool, hex: String)] = [(true, "00"), (true, "c280"), (true, "e0a080"), (true, "f0908080")]
        list.append(Category(name: "First possible sequence of a certain length", sequences: sequences3))
        let sequences4: [(valid: Bool, hex: String)] = [(false, "f888808080"), (false, "fc8480808080")]
        list.append(Category(name: "First possible sequence length 5/6 (invalid codepoints)", sequences: sequences4))
        let sequences5: [(valid: Bool, hex: String)] = [(true, "7f"), (true, "dfbf"), (true, "efbfbf"), (true, "f48fbfbf")]
        list.append(Category(name: "Last possible sequence of a certain length", sequences: sequences5))
        let sequences6: [(valid: Bool, hex: String)] = [(false, "f7bfbfbf"), (false, "fbbfbfbfbf"), (false, "fdbfbfbfbfbf")]
        list.append(Category(name: "Last possible sequence length 4/5/6 (invalid codepoints)", sequences: sequences6))
        let sequences7: [(valid: Bool, hex: String)] = [
            (true, "ed9fbf"), (true, "ee8080"), (true, "efbfbd"), (true, "f48fbfbf"), (false, "f4908080")
        ]
        list.append(Category(name: "Other boundary conditions", sequences: sequences7))
        let sequences8: [(valid: Bool, hex: String)] = [
            (false, "80"), (false, "bf"), (false, "80bf"), (false, "80bf80"), (false, "80bf80bf"), (false, "80bf80bf80"),
            (false, "80bf80bf80bf"),
            (false, (0x80..<0xBF).map { String(format: "%02x", $0) }.joined())
        ]
        list.append(Category(name: "Unexpected continuation bytes", sequences: sequences8))
        let sequences9: [(valid: Bool, hex: String)] = [(0xC0, 0xDF), (0xE0, 0xEF), (0xF0, 0xF7), (0xF8, 0xFB), (0xFC, 0xFD)].map {
            range in
            (false, (range.0..<range.1).map { String(format: "%02x20", $0) }.joined())
        }
        list.append(Category(name: "Lonely start characters", sequences: sequences9))
        let sequences10: [(valid: Bool, hex: String)] = missingLast.map { (false, $0) }
        list.append(Category(name: "Sequences with last continuation byte missing", sequences: sequences10))
        let sequences11: [(valid: Bool, hex: String)] = [(false, missingLast.joined())]
        list.append(Category(name: "Concatenation of incomplete sequences", sequences: sequences11))
        let sequences12: [(valid: Bool, hex: String)] = [(false, "fe"), (false, "ff"), (false, "fefeffff")]
        list.append(Category(name: "Impossible bytes", sequences: sequences12))
        let sequences13: [(valid: Bool, hex: String)] = [
            (false, "c0af"), (false, "e080af"), (false, "f08080af"), (false, "f8808080af"), (false, "fc80808080af")
        ]
        list.append(Category(name: "Examples of an overlong ASCII character", sequences: sequences13))
        let sequences14: [(valid: Bool, hex: String)] = [
            (false, "c1bf"), (false, "e09fbf"), (false, "f08fbfbf"), (false, "f887bfbfbf"), (false, "fc83bfbfbfbf")
        ]
        list.append(Category(name: "Maximum overlong sequences", sequences: sequences14))
        let sequences15: [(valid: Bool, hex: String)] = [
            (false, "c080"), (false, "e08080"), (false, "f0808080"), (false, "f880808080"), (false, "fc8080808080")
        ]
        list.append(Category(name: "Overlong representation of the NUL character", sequences: sequences15))
        let sequences16: [(valid: Bool, hex: String)] = ["eda080", "edadbf", "edae80", "edafbf", "edb080", "edbe80", "edbfbf"].map {
            (false, $0)
        }
        list.append(Category(name: "Single UTF-16 surrogates", sequences: sequences16))
        let sequences17: [(valid: Bool, hex: String)] = [
            "eda080edb080", "eda080edbfbf", "edadbfedb080", "edadbfedbfbf", "edae80edb080", "edae80edbfbf", "edafbfedb080", "edafbfedbfbf"
        ]
        .map { (false, $0) }
        list.append(Category(name: "Paired UTF-16 surrogates", sequences: sequences17))
        let sequences18: [(valid: Bool, hex: String)] = nonCharacters.map { (true, $0) }
        list.append(Category(name: "Non-character code points (valid UTF-8)", sequences: sequences18))
        let sequences19: [(valid: Bool, hex: String)] = ["efbfb9", "efbfba", "efbfbb", "efbfbc", "efbfbd", "efbfbe", "efbfbf"].map {
            (true, $0)
        }
        list.append(Category(name: "Unicode specials (i.e. replacement char)", sequences: sequences19))
        return list
    }()

    /// Kuhn 3.3: each sequence with its last continuation byte missing.
    static let missingLast = ["c0", "e080", "f08080", "f8808080", "fc80808080", "df", "efbf", "f7bfbf", "fbbfbfbf", "fdbfbfbfbf"]

    /// Kuhn 5.3 as Autobahn lists them: EF BF BE/BF, then F0–F4 × 8F/9F/AF/BF × BF × BE/BF (within
    /// U+10FFFF: F4 only with 8F).
    static let nonCharacters: [String] = {
        var list = ["efbfbe", "efbfbf"]
        for lead in ["f0", "f1", "f2", "f3", "f4"] {
            for second in ["8f", "9f", "af", "bf"] where lead != "f4" || second == "8f" {
                for last in ["be", "bf"] {
                    let sequence: String = lead + second + "bf" + last
                    if sequence != "f08fbfbe" && sequence != "f08fbfbf" { list.append(sequence) }
                }
            }
        }
        return list
    }()
}
