import AsyncSocket
@testable import ChatTerminal
import Foundation
import Glibc
import Testing
import TestSupport

/// ``TerminalUI`` on a pseudo-terminal of its own: what is typed reaches the callbacks, printed lines
/// and the status reach the screen, and the terminal is put back exactly, unread input discarded.
/// Serialized: one TerminalUI at a time per process (signal handlers are the process's).
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

        deinit {
            close(slave)
            close(master)
            _ = reader.wait(timeout: .now() + 5)
        }
    }

    @Test func typedLinesArriveAndTheTerminalIsPutBackWithUnreadInputDiscarded() async throws {
        let terminal = try PseudoTerminal()
        let before = terminal.settings()
        let events = EventRecorder<String>()
        let screen = try TerminalUI(prompt: "> ", input: terminal.slave, output: terminal.slave)
        screen.setStatus { _ in "[status one]" }
        try screen.start(onLine: { events.record("line \($0)") }, onEndOfInput: { events.record("end") },
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

    @Test func aSignalReachesItsCallbackOnceAndTheHandlersArePutBack() async throws {
        let terminal = try PseudoTerminal()
        let events = EventRecorder<String>()
        let screen = try TerminalUI(input: terminal.slave, output: terminal.slave)
        var previous = sigaction()
        sigaction(SIGINT, nil, &previous)
        try screen.start(onLine: { events.record("line \($0)") }, onEndOfInput: { events.record("end") },
                         onSignal: { events.record("signal \($0)") })
        try await terminal.waitForOutput("> ")
        kill(getpid(), SIGINT)
        #expect(try await events.next() == "signal \(SIGINT)")
        kill(getpid(), SIGTERM)  // only the first is passed on
        screen.print("marker")
        try await terminal.waitForOutput("marker\r\n")
        screen.finish { events.record("done") }
        #expect(try await events.next() == "done")
        var restored = sigaction()
        sigaction(SIGINT, nil, &restored)
        func address(_ action: sigaction) -> Int? { action.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } }
        #expect(address(restored) == address(previous))
    }

    @Test func anythingButATerminalIsRefused() throws {
        var descriptors: [Int32] = [-1, -1]
        #expect(pipe(&descriptors) == 0)
        defer { descriptors.forEach { close($0) } }
        #expect(throws: TerminalError.notATerminal) { _ = try TerminalUI(input: descriptors[0], output: descriptors[1]) }
    }
}
