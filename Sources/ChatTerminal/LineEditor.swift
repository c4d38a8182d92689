import CEditLine
#if canImport(Glibc)
    import Glibc
#endif

/// libedit (``CEditLine``) as the chat terminal uses it: emacs keys (and the user's `~/.editrc`), a
/// history, a fixed prompt, one key at a time (`EL_UNBUFFERED`), libedit's own signal handling off
/// (``TerminalUI`` handles the signals). Knows where libedit drew the prompt and the line
/// (``EditAreaLayout``), so text can be written above them.
///
/// Not thread-safe: used only by the terminal thread of ``TerminalUI``, from ``begin()`` to ``end()``.
final class LineEditor {
    /// What a key did (``readKey()``).
    enum Key: Equatable {
        /// The line is being edited.
        case editing
        /// Return: the line is complete (without its newline); it is still on the screen, followed by
        /// a newline, over ``rowsOfCompletedLine`` rows.
        case line(String)
        /// Ctrl-D on an empty line.
        case endOfInput
    }

    private let editLine: OpaquePointer
    private let history: OpaquePointer?
    private let prompt: UnsafeMutablePointer<CChar>
    private let promptScalars: [Unicode.Scalar]
    private let streams: [UnsafeMutablePointer<FILE>]
    private var ended = false
    /// Ctrl-L was pressed: the screen should be cleared and drawn again.
    private(set) var redrawRequested = false
    /// The layout of the last completed line, for ``rowsOfCompletedLine``.
    private var completed: [Unicode.Scalar] = []

    /// Opens libedit on the terminal `input` / `output` (the descriptors are duplicated, close-on-exec,
    /// for libedit's streams; the originals stay open). The terminal is not changed before ``begin()``.
    /// - Throws: ``TerminalError/cannotStart(_:)`` when libedit cannot be set up.
    init(prompt: String, historySize: Int, input: Int32, output: Int32) throws(TerminalError) {
        guard let inputStream = fdopen(fcntl(input, F_DUPFD_CLOEXEC, 0), "r") else {
            throw .cannotStart("fdopen: \(String(cString: strerror(errno)))")
        }
        guard let outputStream = fdopen(fcntl(output, F_DUPFD_CLOEXEC, 0), "w") else {
            fclose(inputStream)
            throw .cannotStart("fdopen: \(String(cString: strerror(errno)))")
        }
        guard let errorStream = fdopen(fcntl(output, F_DUPFD_CLOEXEC, 0), "w") else {
            fclose(inputStream)
            fclose(outputStream)
            throw .cannotStart("fdopen: \(String(cString: strerror(errno)))")
        }
        guard let editLine = el_init("im-client", inputStream, outputStream, errorStream) else {
            [inputStream, outputStream, errorStream].forEach { fclose($0) }
            throw .cannotStart("el_init failed")
        }
        streams = [inputStream, outputStream, errorStream]
        self.editLine = editLine
        self.prompt = strdup(prompt)
        promptScalars = Array(prompt.unicodeScalars)
        history = cedit_history_init(Int32(clamping: historySize))
        _ = cedit_set_signal(editLine, 0)
        _ = cedit_set_editor(editLine, "emacs")
        if let history { _ = cedit_set_history(editLine, history) }
        _ = el_source(editLine, nil)  // ~/.editrc, if any
        _ = cedit_set_client_data(editLine, Unmanaged.passUnretained(self).toOpaque())
        _ = cedit_set_prompt(editLine) { editLine in
            guard let editLine, let data = cedit_client_data(editLine) else { return nil }
            return Unmanaged<LineEditor>.fromOpaque(data).takeUnretainedValue().prompt
        }
        _ = cedit_add_function(editLine, "im-client-redraw", "clear the screen and draw everything again") { editLine, _ in
            if let editLine, let data = cedit_client_data(editLine) {
                Unmanaged<LineEditor>.fromOpaque(data).takeUnretainedValue().redrawRequested = true
            }
            return UInt8(CC_NORM)
        }
        _ = cedit_bind(editLine, "^L", "im-client-redraw")
    }

    deinit { end() }

    /// The terminal into edit mode (no echo, one key at a time), and the prompt drawn from the cursor.
    func begin() { _ = cedit_set_unbuffered(editLine, 1) }

    /// Reads and acts on one key (or escape sequence): blocks until it has come, so call it when the
    /// input is readable.
    func readKey() -> Key {
        var count: Int32 = 0
        _ = el_wgets(editLine, &count)
        let line = currentLine()
        if line.scalars.last == "\n" {
            completed = Array(line.scalars.dropLast())
            var text = String.UnicodeScalarView()
            text.append(contentsOf: completed)
            return .line(String(text))
        }
        if line.scalars == ["\u{04}"] { return .endOfInput }
        return .editing
    }

    /// Clears ``redrawRequested``, returning what it was.
    func takeRedrawRequest() -> Bool {
        defer { redrawRequested = false }
        return redrawRequested
    }

    /// After a completed line: an empty line, the prompt drawn from the cursor.
    func restartLine() {
        _ = cedit_set_unbuffered(editLine, 0)
        _ = cedit_set_unbuffered(editLine, 1)
    }

    /// Draws the prompt and the line again from the cursor, which must be where the prompt starts.
    func redraw() { _ = cedit_refresh(editLine) }

    /// Adds `line` to the history (not a blank one, nor the same line twice in a row).
    func remember(_ line: String) {
        guard let history, line.contains(where: { !$0.isWhitespace }) else { return }
        _ = cedit_history_enter(history, line)
    }

    /// The terminal back in cooked mode (`on` false) or into edit mode again (`on` true), as libedit
    /// sets them; after a suspension, the settings the shell left are read again.
    func prepareTerminal(_ on: Bool) { _ = cedit_prepare_terminal(editLine, on ? 1 : 0) }

    /// Reads the terminal's size again (after SIGWINCH).
    func resize() { el_resize(editLine) }

    /// The terminal's width as libedit knows it.
    var columns: Int { max(Int(cedit_columns(editLine)), 1) }

    /// The row of the cursor, counted from the prompt's (0), while a line is edited.
    var cursorRow: Int {
        let line = currentLine()
        return layout.place(prompt: promptScalars, line: line.scalars, cursor: line.cursor).cursor.row
    }

    /// The rows the last completed line (``Key/line(_:)``) took with its prompt; its newline put the
    /// cursor at the start of the row after them.
    var rowsOfCompletedLine: Int {
        layout.place(prompt: promptScalars, line: completed, cursor: completed.count).end.row + 1
    }

    private var layout: EditAreaLayout { EditAreaLayout(columns: columns) }

    /// The line's characters and the cursor's index among them (el_wline(3)).
    private func currentLine() -> (scalars: [Unicode.Scalar], cursor: Int) {
        guard let info = el_wline(editLine), let buffer = info.pointee.buffer else { return ([], 0) }
        let count = info.pointee.lastchar.map { buffer.distance(to: $0) } ?? 0
        let cursor = info.pointee.cursor.map { buffer.distance(to: $0) } ?? count
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(count)
        for index in 0..<max(count, 0) {
            scalars.append(Unicode.Scalar(UInt32(bitPattern: buffer[index])) ?? "\u{FFFD}")
        }
        return (scalars, min(max(cursor, 0), scalars.count))
    }

    /// Ends libedit: the terminal as libedit found it, the history and streams freed. Idempotent.
    func end() {
        guard !ended else { return }
        ended = true
        _ = cedit_set_unbuffered(editLine, 0)
        el_end(editLine)
        if let history { history_end(history) }
        streams.forEach { fclose($0) }
        free(prompt)
    }
}
