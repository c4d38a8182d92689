import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The terminal thread's state and loop (``TerminalUI``). Unchecked Sendable: handed to that thread
/// when it starts and used there only.
final class TerminalLoop: @unchecked Sendable {
    let ui: TerminalUI
    let editor: LineEditor
    let settings: termios
    let callbacks: TerminalUI.Callbacks
    var status: TerminalUI.Status?
    /// Keys are read and the prompt is shown.
    var reading = true
    /// The status line (and, while reading, the prompt and line) are on the screen, the cursor in
    /// the line (or, not reading, at the start of the row below the status line).
    var drawn = false
    var signalled = false
    var suspended = false

    init(ui: TerminalUI, editor: LineEditor, settings: termios, callbacks: TerminalUI.Callbacks) {
        self.ui = ui
        self.editor = editor
        self.settings = settings
        self.callbacks = callbacks
    }

    func run() {
        var taken = ui.take()
        status = taken.status
        taken.statusChanged = false  // drawn now
        writeStatusRow()
        editor.begin()
        drawn = true
        apply(taken)  // lines, or a finish, posted before the thread started
        var descriptors = [
            pollfd(fd: ui.wakeDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: ui.input, events: Int16(POLLIN), revents: 0)
        ]
        while !finished {
            descriptors[1].fd = reading ? ui.input : -1
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, timeout())
            if ready < 0 && errno != EINTR {
                // Cannot happen with these descriptors; never spin, never leave the terminal raw.
                if reading {
                    endOfInput()
                    continue
                }
                end(TerminalUI.Finish(lines: [], done: {}))
                break
            }
            if ready == 0 { redrawStatusIfTicking() }
            if descriptors[0].revents != 0 {
                for signal in drainWakePipe() { handle(signal: signal) }
                if finished { break }
                apply(ui.take())
                if finished { break }
            }
            if reading && descriptors[1].revents != 0 { readInput(descriptors[1].revents) }
        }
    }

    private var finished = false

    // MARK: Drawing

    /// Writes `text` to the terminal, all of it (EINTR and short writes retried; an error ends it).
    /// Rows end with a bare newline: the terminal's `ONLCR` (kept on by libedit's edit mode) starts
    /// the next one at the left.
    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                Glibc.write(ui.output, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// The status line, cut to the width, then a new row.
    func writeStatusRow() {
        let text = status?.render(Date()) ?? ""
        let layout = EditAreaLayout(columns: editor.columns)
        write(layout.truncated(text, toColumns: editor.columns - 1) + "\n")
    }

    /// Moves to the start of the status row and clears from there down.
    func erase() {
        guard drawn else { return }
        let up = 1 + (reading ? editor.cursorRow : 0)
        write("\r\u{1B}[\(up)A\u{1B}[J")
        drawn = false
    }

    /// Draws the status row and, while reading, the prompt and the line, from the cursor.
    func draw() {
        guard !drawn else { return }
        writeStatusRow()
        if reading { editor.redraw() }
        drawn = true
    }

    // MARK: Events

    func apply(_ taken: TerminalUI.Inbox) {
        if taken.statusChanged { status = taken.status }
        if !taken.lines.isEmpty || taken.statusChanged || (taken.endInput && reading) {
            erase()
            for line in taken.lines { write(line + "\n") }
            if taken.endInput { reading = false }
            draw()
        }
        if let finish = taken.finish { end(finish) }
    }

    func end(_ finish: TerminalUI.Finish) {
        erase()
        for line in finish.lines { write(line + "\n") }
        editor.end()
        var saved = settings
        _ = tcsetattr(ui.input, TCSAFLUSH, &saved)
        TerminalSignals.uninstall()
        ui.close()
        finished = true
        finish.done()
    }

    func readInput(_ events: Int16) {
        var available: Int32 = 0
        let hungUp =
            events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
            || ioctl(ui.input, UInt(FIONREAD), &available) != 0 || available == 0
        if hungUp {
            endOfInput()
            return
        }
        switch editor.readKey() {
        case .editing:
            if editor.takeRedrawRequest() {
                write("\u{1B}[H\u{1B}[2J")
                drawn = false
                draw()
            }
        case .line(let text):
            // The line and its newline are on the screen: up to the status row, clear, draw anew.
            write("\r\u{1B}[\(1 + editor.rowsOfCompletedLine)A\u{1B}[J")
            editor.remember(text)
            writeStatusRow()
            editor.restartLine()
            drawn = true
            callbacks.onLine(text)
        case .endOfInput:
            endOfInput()
        }
    }

    /// Ctrl-D or a hang-up: the prompt goes, keys are no longer read, the callback is told.
    func endOfInput() {
        guard reading else { return }
        erase()
        reading = false
        draw()
        callbacks.onEndOfInput()
    }

    /// The signal numbers in the wake pipe (its zero bytes are wake-ups).
    func drainWakePipe() -> [Int32] {
        var signals: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(ui.wakeDescriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            signals += buffer[..<count].filter { $0 != 0 }.map { Int32($0) }
        }
        return signals
    }

    func handle(signal: Int32) {
        switch signal {
        case SIGWINCH:
            erase()
            editor.resize()
            draw()
        case SIGTSTP:
            // Ctrl-Z: leave the terminal as it was, stop; SIGCONT (fg) sets it up again.
            erase()
            editor.prepareTerminal(false)
            var saved = settings
            _ = tcsetattr(ui.input, TCSADRAIN, &saved)
            suspended = true
            kill(getpid(), SIGSTOP)
        case SIGCONT:
            editor.prepareTerminal(false)
            editor.prepareTerminal(true)
            if suspended {
                suspended = false
                drawn = false
            } else {
                erase()
            }
            draw()
        default:
            guard TerminalSignals.ending.contains(signal), !signalled else { return }
            signalled = true
            callbacks.onSignal(signal)
        }
    }

    // MARK: Time

    /// poll's timeout: until the next whole second while the status ticks, else none.
    func timeout() -> Int32 {
        guard status?.ticking == true else { return -1 }
        let now = Date().timeIntervalSince1970
        return Int32(((now.rounded(.down) + 1 - now) * 1000).rounded(.up)) + 5
    }

    func redrawStatusIfTicking() {
        guard status?.ticking == true else { return }
        erase()
        draw()
    }
}
