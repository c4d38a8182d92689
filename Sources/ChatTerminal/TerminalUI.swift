import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A line-oriented terminal screen: the line being typed stays at the bottom, under a status line,
/// and lines written with ``print(_:)`` appear above both without disturbing them, the half-typed
/// line and its cursor drawn again as they were. Editing and history are libedit's (``LineEditor``).
///
/// ```
/// 14:02 bob (direct): hi ann          ← print(_:), oldest first, scrolling up
/// 14:03 #17 → bob: hello
/// [online as ann · 1 message waiting] ← setStatus(ticking:_:)
/// > what you are typ_                 ← the line being edited (libedit)
/// ```
///
/// One thread of its own owns the terminal from ``start(onLine:onEndOfInput:onSignal:)`` to the end
/// of ``finish(printing:then:)``: it waits in poll(2) on the input and on a wake pipe, to which the
/// other methods (callable from any thread, never blocking) and the signal handlers
/// (``TerminalSignals``) write. The callbacks run on that thread, one at a time.
///
/// The terminal's settings are saved at ``start(onLine:onEndOfInput:onSignal:)`` and put back, with
/// the input not yet read discarded (`TCSAFLUSH`, so nothing typed falls into the shell), the status
/// line and the unsent line erased, and the cursor at the start of a fresh row, by
/// ``finish(printing:then:)``, on a crash (``TerminalSignals``) and around a suspension (Ctrl-Z).
/// One ``TerminalUI`` at a time per process (signal handlers are the process's).
///
/// Assumes an ANSI (ECMA-48) terminal: moves up with `ESC [ n A` and clears with `ESC [ J`. A key
/// libedit reads as the start of a sequence (a lone Esc, emacs's meta prefix) holds the screen until
/// the next key completes it: lines printed meanwhile appear then.
public final class TerminalUI: Sendable {
    /// What other threads hand to the terminal thread.
    struct Inbox: Sendable {
        var lines: [String] = []
        var status: Status?
        var statusChanged = false
        var endInput = false
        var finish: Finish?
        /// The wake pipe is closed: nothing more is taken.
        var closed = false
    }

    /// The status line: `render(now)`, redrawn every second while `ticking`.
    struct Status: Sendable {
        let ticking: Bool
        let render: @Sendable (Date) -> String
    }

    /// What ``finish(printing:then:)`` asked for.
    struct Finish: Sendable {
        let lines: [String]
        let done: @Sendable () -> Void
    }

    /// What the terminal thread calls.
    struct Callbacks: Sendable {
        let onLine: @Sendable (String) -> Void
        let onEndOfInput: @Sendable () -> Void
        let onSignal: @Sendable (Int32) -> Void
    }

    let input: Int32
    let output: Int32
    private let prompt: String
    private let historySize: Int
    // LockedValue (a pthread mutex), not a Synchronization `Mutex`, whose futex ThreadSanitizer does not
    // see: it reported `setStatus` and the terminal thread as racing on the inbox.
    private let inbox = LockedValue(Inbox())
    /// The wake pipe: [0] read by the terminal thread, [1] written by everyone else.
    private let wake: (read: Int32, write: Int32)
    private let started = LockedValue(false)

    /// A screen on the terminal `input` / `output` (default standard input and output), not started.
    ///
    /// - Parameters:
    ///   - prompt: drawn before the line typed; plain text, no escape sequences. Default `"> "`.
    ///   - historySize: how many lines Up can bring back (libedit's history, in memory). Default 500.
    /// - Throws: ``TerminalError/notATerminal`` when `input` or `output` is not a terminal;
    ///   ``TerminalError/cannotStart(_:)`` when the wake pipe cannot be made.
    public init(
        prompt: String = "> ", historySize: Int = 500, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO
    ) throws(TerminalError) {
        guard isatty(input) == 1, isatty(output) == 1 else { throw .notATerminal }
        var pipeDescriptors: [Int32] = [-1, -1]
        guard pipe(&pipeDescriptors) == 0 else { throw .cannotStart("pipe: \(String(cString: strerror(errno)))") }
        for descriptor in pipeDescriptors {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        wake = (pipeDescriptors[0], pipeDescriptors[1])
        self.input = input
        self.output = output
        self.prompt = prompt
        self.historySize = historySize
    }

    /// Saves the terminal's settings, sets it up for editing and starts the terminal thread, which
    /// draws the status line (empty until ``setStatus(ticking:_:)``) and the prompt. Call once.
    ///
    /// - Parameters:
    ///   - onLine: each line typed (Return), without its newline, blank ones too; the screen has made
    ///     way for the next line before. The line is added to the history.
    ///   - onEndOfInput: Ctrl-D on an empty line, or the terminal hung up; the prompt is gone and
    ///     keys are no longer read (as after ``endInput()``). Called at most once.
    ///   - onSignal: SIGINT (Ctrl-C), SIGTERM, SIGHUP or SIGQUIT arrived, with its number; typically
    ///     ends with ``finish(printing:then:)``. Called for the first one only.
    /// - Throws: ``TerminalError/cannotStart(_:)`` when the settings cannot be read or libedit cannot
    ///   be set up (nothing has changed then).
    public func start(
        onLine: @escaping @Sendable (String) -> Void,
        onEndOfInput: @escaping @Sendable () -> Void,
        onSignal: @escaping @Sendable (Int32) -> Void
    ) throws(TerminalError) {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        precondition(first, "TerminalUI.start called twice")
        var settings = termios()
        guard tcgetattr(input, &settings) == 0 else { throw .cannotStart("tcgetattr: \(String(cString: strerror(errno)))") }
        let editor = try LineEditor(prompt: prompt, historySize: historySize, input: input, output: output)
        TerminalSignals.install(wakeDescriptor: wake.write, terminal: output, settings: settings)
        let loop = TerminalLoop(
            ui: self, editor: editor, settings: settings,
            callbacks: Callbacks(onLine: onLine, onEndOfInput: onEndOfInput, onSignal: onSignal))
        let thread = Thread { loop.run() }
        thread.name = "TerminalUI"
        thread.start()
    }

    /// Writes `line` above the status line (it should hold no control characters: escape what came
    /// from the network; SGR colour sequences are fine). Lines keep their order.
    public func print(_ line: String) {
        post { $0.lines.append(line) }
    }

    /// Shows `render(now)` as the status line, at once and, while `ticking`, again every second (for
    /// a countdown). It is cut to the terminal's width (SGR sequences take no room).
    public func setStatus(ticking: Bool = false, _ render: @escaping @Sendable (Date) -> String) {
        post {
            $0.status = Status(ticking: ticking, render: render)
            $0.statusChanged = true
        }
    }

    /// Stops reading keys: the prompt and the half-typed line are erased, the status line stays;
    /// keys typed from now on are discarded when the terminal is put back. `onEndOfInput` is not called.
    public func endInput() {
        post { $0.endInput = true }
    }

    /// Writes `lines` (after those already given to ``print(_:)``), erases the status line and the
    /// line being typed, puts the terminal back as ``start(onLine:onEndOfInput:onSignal:)`` found it
    /// (discarding unread input) and the signal handlers as they were, then calls `done` on the
    /// terminal thread, which then ends (`done` may exit(3) the process). A signal sent to the process
    /// before this call is the screen's even if not yet delivered (it is then ignored), never the
    /// handler's put back (``TerminalSignals/uninstall()``). Before `start`, or when the terminal is
    /// already finished, calls `done` at once on this thread.
    public func finish(printing lines: [String] = [], then done: @escaping @Sendable () -> Void) {
        let running = started.withLock { $0 }
        let accepted =
            running
            && post { inbox in
                guard inbox.finish == nil else { return }
                inbox.finish = Finish(lines: lines, done: done)
            }
        if !accepted { done() }
    }

    /// Applies `change` to the inbox and wakes the terminal thread; false (nothing changed) once closed.
    @discardableResult
    private func post(_ change: (inout Inbox) -> Void) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.closed else { return false }
            change(&inbox)
            var zero: UInt8 = 0
            _ = Glibc.write(wake.write, &zero, 1)  // EAGAIN: the pipe is full, the thread will wake anyway
            return true
        }
    }

    // MARK: For the terminal thread

    /// Takes what was posted.
    func take() -> Inbox {
        inbox.withLock { inbox in
            let taken = inbox
            inbox.lines = []
            inbox.statusChanged = false
            inbox.endInput = false
            inbox.finish = nil
            return taken
        }
    }

    /// The wake pipe's read end.
    var wakeDescriptor: Int32 { wake.read }

    /// Closes the wake pipe: later posts are refused.
    func close() {
        inbox.withLock { inbox in
            inbox.closed = true
            _ = Glibc.close(wake.read)
            _ = Glibc.close(wake.write)
        }
    }
}

/// Why a ``TerminalUI`` cannot run.
public enum TerminalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Standard input or output (the descriptors given) is not a terminal.
    case notATerminal
    /// The terminal could not be set up; the text says which call failed.
    case cannotStart(String)

    /// One line for error messages.
    public var description: String {
        switch self {
        case .notATerminal: return "not a terminal"
        case .cannotStart(let reason): return "cannot set up the terminal: \(reason)"
        }
    }
}
