@testable import ChatTerminal
import Testing

/// The rows libedit draws the prompt and the line in, as ``EditAreaLayout`` computes them: exact
/// positions at and around the right margin.
@Suite struct EditAreaLayoutTests {
    typealias Position = EditAreaLayout.Position

    /// A fixed table instead of the C library's (which depends on the locale): "日" is 2 columns
    /// wide, U+0301 (a combining accent) 0, U+0001 a control character, U+E000 unprintable.
    static let glyphs: @Sendable (Unicode.Scalar) -> EditAreaLayout.Glyph = { scalar in
        switch scalar {
        case "\t": return .tab
        case "日": return .printable(width: 2)
        case "\u{301}": return .printable(width: 0)
        case "\u{1}": return .control
        case "\u{E000}": return .unprintable(columns: 7)
        default: return .printable(width: 1)
        }
    }

    let layout = EditAreaLayout(columns: 10, glyph: EditAreaLayoutTests.glyphs)
    let prompt: [Unicode.Scalar] = ["> "].flatMap { Array($0.unicodeScalars) }

    func place(_ line: String, cursor: Int? = nil) -> (cursor: Position, end: Position) {
        let scalars = Array(line.unicodeScalars)
        return layout.place(prompt: prompt, line: scalars, cursor: cursor ?? scalars.count)
    }

    @Test func aShortLineStaysOnThePromptsRow() {
        #expect(place("hello") == (Position(row: 0, column: 7), Position(row: 0, column: 7)))
        #expect(place("hello", cursor: 0) == (Position(row: 0, column: 2), Position(row: 0, column: 7)))
        #expect(place("") == (Position(row: 0, column: 2), Position(row: 0, column: 2)))
    }

    @Test func aLongLineWrapsAtTheMargin() {
        #expect(place("hello world", cursor: 5) == (Position(row: 0, column: 7), Position(row: 1, column: 3)))
        #expect(place(String(repeating: "x", count: 30)).end == Position(row: 3, column: 2))
    }

    /// A line that fills the row exactly leaves the cursor at the start of the next one.
    @Test func aFullRowPutsTheCursorOnTheNextRow() {
        #expect(place("abcdefgh") == (Position(row: 1, column: 0), Position(row: 1, column: 0)))
        #expect(place("abcdefgh", cursor: 7).cursor == Position(row: 0, column: 9))
    }

    /// A wide character that does not fit in the room left starts the next row; the cursor before it
    /// is shown there too.
    @Test func aWideCharacterAtTheMarginMovesToTheNextRow() {
        #expect(place("abcdefg日") == (Position(row: 1, column: 2), Position(row: 1, column: 2)))
        #expect(place("abcdefg日", cursor: 7).cursor == Position(row: 1, column: 0))
        #expect(place("abcdef日").end == Position(row: 1, column: 0))
    }

    @Test func tabsControlsCombiningMarksAndUnprintables() {
        #expect(place("a\tb").end == Position(row: 0, column: 9))
        #expect(place("ab\u{1}").end == Position(row: 0, column: 6))
        #expect(place("e\u{301}").end == Position(row: 0, column: 3))
        #expect(place("\u{E000}").end == Position(row: 0, column: 9))
        #expect(place("\u{E000}x").end == Position(row: 1, column: 0))
    }

    /// The C library's classes for characters whose class does not depend on the locale.
    @Test func libeditsClassesOfASCII() {
        #expect(EditAreaLayout.libeditGlyph("a") == .printable(width: 1))
        #expect(EditAreaLayout.libeditGlyph(" ") == .printable(width: 1))
        #expect(EditAreaLayout.libeditGlyph("\t") == .tab)
        #expect(EditAreaLayout.libeditGlyph("\u{7}") == .control)
        #expect(EditAreaLayout.libeditGlyph("\u{7F}") == .control)
    }

    @Test func escapeSequencesTakeNoRoomAndSurviveACut() {
        let status = "[\u{1B}[32monline as ann\u{1B}[39m · 2 messages waiting]"
        #expect(layout.width(of: status) == 36)
        #expect(layout.truncated(status, toColumns: 36) == status)
        #expect(layout.truncated(status, toColumns: 8) == "[\u{1B}[32monline…\u{1B}[0m")
        #expect(layout.truncated("abcdef", toColumns: 4) == "abc…")
        #expect(layout.truncated("abcd", toColumns: 4) == "abcd")
        #expect(layout.width(of: "日日") == 4)
        #expect(layout.truncated("日日日", toColumns: 4) == "日…")
    }
}
