import AsyncSocket
@testable import ChatTerminal
import Foundation
import Glibc
import Synchronization
import Testing
import TestSupport

/// ``TerminalUI`` on a pseudo-terminal of its own: what is typed reaches the callbacks, printed lines
/// and the status reach the screen, and the terminal is put back exactly, unread input discarded.
/// Serialized: one TerminalUI at a time per process (signal handlers are the process's). No test here
/// signals the process (other tests run in it): signals are raised on the test's own thread.
@Suite(.serialized) struct TerminalUITests {
    /// A pseudo-terminal, 80 × 24; everything written to it is collected from the master side.
    final class PseudoTerminal: Sendable {
        let master: Int32
        let slave: Int32
        private let shown = LockedValue(Data())
        private let reader = DispatchSemaphore(value: 0)

        init() throws {
            var master: Int32 = -1
            var slave: Int32 = -1
            var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
            guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw ChildProcessError("openpty: \(errno)") }
            // Close-on-exec at once: a child spawned by another test must not keep the slave open,
            // else the reader below would not see its end.
            for descriptor in [master, slave] { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            self.master = master
            self.slave = slave
            let shown = self.shown
            let reader = self.reader
            let descriptor = master
            Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(descriptor, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    shown.withLock { $0.append(contentsOf: buffer[..<count]) }
                }
                reader.signal()
            }.start()
        }

        /// Types `text` (as the keyboard would: bytes into the master side).
        func type(_ text: String) {
            _ = text.withCString { write(master, $0, strlen($0)) }
        }

        /// What the terminal showed so far, as text.
        var output: String { String(decoding: shown.withLock { $0 }, as: UTF8.self) }

        /// Waits until the output contains `text`.
        func waitForOutput(_ text: String) async throws {
            try await waitUntil("the terminal to show \(text.debugDescription)") { output.contains(text) }
        }

        func settings() -> termios {
            var settings = termios()
            _ = tcgetattr(slave, &settings)
            return settings
        }

        /// Closes the slave; the reader ends when the last slave descriptor is closed (read(2) on the
        /// master fails with EIO), and only then is the master closed: closed before, its number could
        /// go to another test's socket, which the reader would read from. Left open if the reader is
        /// still reading after 5 s (a screen not finished still holds the slave).
        deinit {
            close(slave)
            if reader.wait(timeout: .now() + 5) == .success { close(master) }
        }
    }

    @Test func typedLinesArriveAndTheTerminalIsPutBackWithUnreadInputDiscarded() async throws {
        let terminal = try PseudoTerminal()
        let before = terminal.settings()
        let events = EventRecorder<String>()
        let screen = try TerminalUI(prompt: "> ", input: terminal.slave, output: terminal.slave)
        screen.setStatus { _ in "[status one]" }
        try screen.start(
            onLine: { events.record("line \($0)") }, onEndOfInput: { events.record("end") },
            onSignal: { events.record("signal \($0)") })
        try await terminal.waitForOutput("[status one]\r\n")
        try await terminal.waitForOutput("> ")
        // Edit mode: no echo by the terminal, no line buffering.
        let editing = terminal.settings()
        #expect(editing.c_lflag & tcflag_t(ECHO) == 0)
        #expect(editing.c_lflag & tcflag_t(ICANON) == 0)
        #expect(editing.c_lflag & tcflag_t(ISIG) != 0)

        terminal.type("hello\r")
        #expect(try await events.next() == "line hello")
        terminal.type("\u{1B}[A\r")  // Up: the line before, again
        #expect(try await events.next() == "line hello")
        terminal.type("  \r")
        #expect(try await events.next() == "line   ")

        screen.print("from afar")
        try await terminal.waitForOutput("from afar\r\n")
        screen.setStatus { _ in "[status two]" }
        try await terminal.waitForOutput("[status two]\r\n")

        terminal.type("half")
        try await terminal.waitForOutput("half")
        terminal.type("\u{04}")  // Ctrl-D on a line with text: deletes nothing, ends nothing
        screen.print("still here")
        try await terminal.waitForOutput("still here\r\n")
        terminal.type("\u{15}\u{04}")  // Ctrl-U empties the line; Ctrl-D on the empty line ends the input
        #expect(try await events.next() == "end")

        // Keys typed now are not read; putting the terminal back discards them.
        terminal.type("left over\r")
        try await waitUntil("the keys to reach the terminal") {
            var pending: Int32 = 0
            return ioctl(terminal.slave, UInt(FIONREAD), &pending) == 0 && pending == 10
        }
        screen.print("last words")
        screen.finish(printing: ["goodbye"]) { events.record("done") }
        #expect(try await events.next() == "done")
        // The last thing shown (the reading thread may lag behind): the lines given to finish.
        try await waitUntil("goodbye, last") { terminal.output.hasSuffix("goodbye\r\n") }
        #expect(terminal.output.contains("last words\r\n"))
        let after = terminal.settings()
        #expect(after.c_lflag == before.c_lflag)
        #expect(after.c_iflag == before.c_iflag)
        #expect(after.c_oflag == before.c_oflag)
        #expect(withUnsafeBytes(of: after.c_cc) { Array($0) } == withUnsafeBytes(of: before.c_cc) { Array($0) })
        var pending: Int32 = -1
        #expect(ioctl(terminal.slave, UInt(FIONREAD), &pending) == 0)
        #expect(pending == 0)
        // Once finished, a finish calls back at once and nothing more is printed.
        let shown = terminal.output
        screen.finish(printing: ["again"]) { events.record("done again") }
        #expect(try await events.next() == "done again")
        screen.print("ignored")
        #expect(terminal.output == shown)
    }

    /// The signals are raised on this thread, not sent to the process with kill(2): the test process
    /// runs other tests, a process-directed signal is delivered by whichever thread does not block it
    /// (the main thread: Dispatch's workers block SIGINT and SIGTERM) whenever it runs next, and
    /// interrupts what it was doing. raise(3) runs the handler here before it returns.
    @Test func aSignalReachesItsCallbackOnceAndTheHandlersArePutBack() async throws {
        let terminal = try PseudoTerminal()
        let events = EventRecorder<String>()
        let screen = try TerminalUI(input: terminal.slave, output: terminal.slave)
        let counting = try CountingHandler(for: SIGTERM)  // SIGTERM's handler before the screen's
        defer { counting.remove() }
        let previous = Self.handlers()
        try screen.start(
            onLine: { events.record("line \($0)") }, onEndOfInput: { events.record("end") },
            onSignal: { events.record("signal \($0)") })
        try await terminal.waitForOutput("> ")
        #expect(Self.handlers() != previous)
        Self.raiseOnThisThread(SIGINT)
        #expect(try await events.next() == "signal \(SIGINT)")
        Self.raiseOnThisThread(SIGTERM)  // handled before the marker is printed, and not passed on
        screen.print("marker")
        try await terminal.waitForOutput("marker\r\n")
        screen.finish { events.record("done") }
        #expect(try await events.next() == "done")
        #expect(Self.handlers() == previous)
        #expect(counting.calls == 0)
    }

    /// Regression: a SIGTERM sent to the process just before the screen finished, not yet delivered
    /// (the thread it went to had not run yet), was delivered once the handlers were put back: the
    /// default action killed the whole test process (`swift test` reports nothing for a SIGTERM).
    /// Here it is pending on this thread, which blocks it, as sure a way as a test has; uninstall()
    /// takes it into the wake pipe. SIGTERM's previous handler counts, so a regression is no death.
    @Test func aSignalPendingWhenTheHandlersArePutBackIsTheScreensNotThePreviousHandlers() throws {
        var wake: [Int32] = [-1, -1]
        try #require(pipe(&wake) == 0)
        defer { wake.forEach { close($0) } }
        _ = fcntl(wake[0], F_SETFL, O_NONBLOCK)
        let counting = try CountingHandler(for: SIGTERM)
        defer { counting.remove() }
        let previous = Self.handlers()
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var mask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &mask)
        TerminalSignals.install(wakeDescriptor: wake[1], terminal: -1, settings: termios())
        pthread_kill(pthread_self(), SIGTERM)
        #expect(Self.pending(SIGTERM))
        TerminalSignals.uninstall()
        #expect(!Self.pending(SIGTERM))
        #expect(Self.handlers() == previous)
        // Unblocked, a SIGTERM still pending goes to the handler put back: `counting`, not a death.
        pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        #expect(counting.calls == 0)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(read(wake[0], &buffer, buffer.count) == 1)
        #expect(buffer[0] == UInt8(SIGTERM))
    }

    // MARK: Signals

    /// Raises `signal` on this thread, unblocked for the call (a Dispatch worker blocks the ending
    /// signals): its handler has run when this returns, on this thread, and no other.
    static func raiseOnThisThread(_ signal: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        var mask = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &set, &mask)
        raise(signal)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
    }

    /// Whether `signal` waits for this thread or the process (sigpending(2)).
    static func pending(_ signal: Int32) -> Bool {
        var set = sigset_t()
        sigemptyset(&set)
        sigpending(&set)
        return sigismember(&set, signal) == 1
    }

    /// The handlers (their addresses, 0 for SIG_DFL) and flags of the signals TerminalSignals handles.
    static func handlers() -> [[Int]] {
        (TerminalSignals.forwarded + TerminalSignals.fatal).map { signal in
            var action = sigaction()
            sigaction(signal, nil, &action)
            return [Int(signal), action.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } ?? 0, Int(action.sa_flags)]
        }
    }

    /// A handler for one signal that counts its calls, in place until ``remove()`` puts back the one
    /// before (one at a time: the count is a global, as a handler cannot capture).
    struct CountingHandler {
        let signal: Int32
        private let before: sigaction

        init(for signal: Int32) throws {
            self.signal = signal
            countingHandlerCalls.store(0, ordering: .sequentiallyConsistent)
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in countingHandlerCalls.add(1, ordering: .sequentiallyConsistent) }
            sigemptyset(&action.sa_mask)
            var before = sigaction()
            guard sigaction(signal, &action, &before) == 0 else { throw ChildProcessError("sigaction: \(errno)") }
            self.before = before
        }

        /// How many times the handler ran.
        var calls: Int { countingHandlerCalls.load(ordering: .sequentiallyConsistent) }

        func remove() {
            var before = before
            sigaction(signal, &before, nil)
        }
    }

    @Test func anythingButATerminalIsRefused() throws {
        var descriptors: [Int32] = [-1, -1]
        #expect(pipe(&descriptors) == 0)
        defer { descriptors.forEach { close($0) } }
        #expect(throws: TerminalError.notATerminal) { _ = try TerminalUI(input: descriptors[0], output: descriptors[1]) }
    }
}

/// The calls of ``TerminalUITests/CountingHandler``'s handler.
private let countingHandlerCalls = Atomic<Int>(0)
