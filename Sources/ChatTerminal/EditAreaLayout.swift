import CEditLine
#if canImport(Glibc)
    import Glibc
#endif

/// Where libedit draws the prompt and the line being edited, in rows of the terminal: the arithmetic
/// of its refresh (`re_refresh`, `re_putc` and `re_addc` in libedit's refresh.c), so ``TerminalUI``
/// knows how many rows to go up to reach the top of what libedit drew. Pure: any thread.
///
/// ```
/// columns = 10, prompt "> ", line "hello world", cursor after "hello":
///   row 0  > hello wo      the line wraps at the margin, as the terminal does
///   row 1  rld
///   cursor (row 0, column 7); end (row 1, column 3)
/// ```
struct EditAreaLayout: Sendable {
    /// How libedit shows one character (its `ct_chr_class`).
    enum Glyph: Equatable, Sendable {
        /// A tab: spaces up to the next multiple of 8 columns.
        case tab
        /// A C0 or C1 control character or DEL, shown as `^X`: 2 columns.
        case control
        /// A printable character `width` columns wide (wcwidth(3); 0 for combining marks).
        case printable(width: Int)
        /// Another unprintable character, shown as `\U+XXXX` (7 columns) or `\U+XXXXX` (8).
        case unprintable(columns: Int)
    }

    /// A place in the edit area: the row (0 = the prompt's) and the column (0 = leftmost).
    struct Position: Equatable, Sendable {
        var row: Int
        var column: Int
    }

    /// The terminal's width (at least 1).
    let columns: Int
    /// How each character is shown.
    let glyph: @Sendable (Unicode.Scalar) -> Glyph

    init(columns: Int, glyph: @escaping @Sendable (Unicode.Scalar) -> Glyph = EditAreaLayout.libeditGlyph) {
        self.columns = max(columns, 1)
        self.glyph = glyph
    }

    /// Where the cursor (before `line[cursor]`, or after the last character when `cursor` is
    /// `line.count`) and the end of the line are, with `prompt` drawn first from row 0, column 0.
    func place(prompt: [Unicode.Scalar], line: [Unicode.Scalar], cursor: Int) -> (cursor: Position, end: Position) {
        var position = Position(row: 0, column: 0)
        func advance(_ width: Int) {
            // A character wider than the room left goes to the next row (re_putc).
            if width > 1 && width <= columns {
                while position.column + width > columns { advance(1) }
            }
            position.column += width
            if position.column >= columns {
                position.row += 1
                position.column = 0
            }
        }
        for scalar in prompt {
            // The prompt is put as it is (prompt_print, re_putc): its width only.
            if case .printable(let width) = glyph(scalar) { advance(width) }
        }
        var cursorPosition: Position?
        for (index, scalar) in line.enumerated() {
            let shown = glyph(scalar)
            if index == cursor {
                cursorPosition = position
                if case .printable(let width) = shown, width > 1, position.column + width > columns {
                    cursorPosition = Position(row: position.row + 1, column: 0)
                }
            }
            switch shown {
            case .tab:
                repeat { advance(1) } while position.column % 8 != 0
            case .control:
                advance(1)
                advance(1)
            case .printable(let width):
                advance(width)
            case .unprintable(let count):
                for _ in 0..<count { advance(1) }
            }
        }
        return (cursorPosition ?? position, position)
    }

    /// How libedit classifies `scalar` (chartype.c, `ct_chr_class` and `ct_visual_width`), by the C
    /// library's wide-character functions in the current `LC_CTYPE` locale.
    @Sendable static func libeditGlyph(_ scalar: Unicode.Scalar) -> Glyph {
        if scalar == "\t" { return .tab }
        let character = wint_t(scalar.value)
        if scalar.value < 0x100 && iswcntrl(character) != 0 { return .control }
        if iswprint(character) != 0 { return .printable(width: max(Int(wcwidth(wchar_t(bitPattern: scalar.value))), 0)) }
        return .unprintable(columns: scalar.value > 0xFFFF ? 8 : 7)
    }

    /// The columns `text` takes, ANSI escape sequences (`ESC [ … final`) taking none.
    func width(of text: String) -> Int {
        var total = 0
        forEachVisible(text) { _, width in total += width }
        return total
    }

    /// `text` cut to at most `limit` columns (escape sequences kept; a `…` ends a cut text), then, if
    /// it has escape sequences, a reset of every attribute (SGR 0), so a cut colour does not leak.
    func truncated(_ text: String, toColumns limit: Int) -> String {
        let full = width(of: text)
        let hasEscapes = text.unicodeScalars.contains("\u{1B}")
        guard full > limit else { return text }
        var result = String.UnicodeScalarView()
        var used = 0
        var stopped = false
        forEachVisible(text) { scalar, width in
            guard !stopped else { return }
            if width == 0 || used + width <= limit - 1 {
                result.append(scalar)
                used += width
            } else {
                stopped = true
            }
        }
        return String(result) + "…" + (hasEscapes ? "\u{1B}[0m" : "")
    }

    /// Calls `body` with each scalar of `text` and the columns it takes (0 inside escape sequences).
    private func forEachVisible(_ text: String, _ body: (Unicode.Scalar, Int) -> Void) {
        var inEscape = false
        var previous: Unicode.Scalar = " "
        for scalar in text.unicodeScalars {
            if inEscape {
                body(scalar, 0)
                // ESC [ parameters… final byte (0x40-0x7E); a lone ESC x takes one byte after it.
                if previous == "\u{1B}" && scalar != "[" {
                    inEscape = false
                } else if previous != "\u{1B}" && (0x40...0x7E).contains(scalar.value) {
                    inEscape = false
                }
                previous = scalar
                continue
            }
            if scalar == "\u{1B}" {
                inEscape = true
                previous = scalar
                body(scalar, 0)
                continue
            }
            previous = scalar
            if case .printable(let width) = glyph(scalar) { body(scalar, width) } else { body(scalar, 0) }
        }
    }
}
