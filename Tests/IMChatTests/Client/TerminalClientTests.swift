import Foundation
import IMChat
import Testing
import TestSupport

/// Whether a `tmux` is on the PATH.
private let tmuxInstalled = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .contains { FileManager.default.isExecutableFile(atPath: "\($0)/tmux") }

/// `im-client` in a real terminal: tmux runs a shell in a 100 × 30 window on a server of its own,
/// keys are typed with `send-keys`, and the screen is read with `capture-pane`, polled until it
/// shows what is expected (10 s at most), never after a fixed sleep.
@Suite struct TerminalClientTests {
    /// A tmux server on a private socket with one window running `sh` (prompt `$ `).
    final class Tmux: Sendable {
        let socket = "im-client-test-\(UUID().uuidString.prefix(8))"

        /// Starts it with `environment` for the shell.
        init(environment: [String: String]) async throws {
            let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
            try await run(["new-session", "-d", "-x", "100", "-y", "30", "-s", "chat", "env \(variables) sh"])
        }

        /// Runs `tmux -L SOCKET -f /dev/null ARGUMENTS`; returns what it printed. Throws unless it exits 0.
        @discardableResult
        func run(_ arguments: [String]) async throws -> String {
            let tmux = try ChildProcess("tmux", ["-L", socket, "-f", "/dev/null"] + arguments)
            defer { tmux.stop() }
            let status = try await tmux.exitStatus()
            let output = String(decoding: tmux.allOutput, as: UTF8.self)
            guard status == 0 else { throw ChildProcessError("tmux \(arguments.joined(separator: " ")): status \(status): \(output)") }
            return output
        }

        /// Types `text` as it is.
        func type(_ text: String) async throws { try await run(["send-keys", "-t", "chat", "-l", text]) }

        /// Presses the keys named (tmux's names: `Enter`, `C-c`).
        func press(_ keys: String...) async throws { try await run(["send-keys", "-t", "chat"] + keys) }

        /// The window's rows, trailing blanks cut, empty rows at the bottom left out.
        func screen() async throws -> [String] {
            var rows = try await run(["capture-pane", "-t", "chat", "-p"]).split(separator: "\n", omittingEmptySubsequences: false)
                .map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
            while rows.last?.isEmpty == true { rows.removeLast() }
            return rows
        }

        /// The cursor's column and row.
        func cursor() async throws -> (column: Int, row: Int) {
            let place = try await run(["display-message", "-t", "chat", "-p", "#{cursor_x} #{cursor_y}"])
                .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            guard place.count == 2 else { throw ChildProcessError("no cursor position") }
            return (place[0], place[1])
        }

        /// Polls the screen until `condition` holds (10 s at most); returns that screen.
        @discardableResult
        func waitForScreen(_ what: String, _ condition: ([String]) -> Bool) async throws -> [String] {
            let deadline = ContinuousClock.now + .seconds(10)
            var rows = try await screen()
            while !condition(rows) {
                guard ContinuousClock.now < deadline else {
                    throw WaitTimedOut(description: "never: \(what); the screen:\n" + rows.joined(separator: "\n"))
                }
                try await Task.sleep(for: .milliseconds(20))
                rows = try await screen()
            }
            return rows
        }

        func stop() async { _ = try? await run(["kill-server"]) }
    }

    /// `HH:MM ` and the rest of a row, or nil for a row without a time.
    static func untimed(_ row: String) -> String? {
        guard let match = row.wholeMatch(of: /\d\d:\d\d (.*)/) else { return nil }
        return String(match.output.1)
    }

    /// Typing while messages arrive: they print above the status line, the half-typed line stays
    /// intact at the bottom with its cursor, is sent once finished, and Ctrl-C leaves the shell
    /// clean: the terminal's settings exactly as before, nothing typed left over, status 130.
    @Test(.enabled(if: tmuxInstalled, "tmux is not installed (scripts/setup.sh installs it)"))
    func typingWhileMessagesArriveLeavesTheTypedLineIntact() async throws {
        let server = try await ChatServerProcess.start()
        defer { server.stop() }
        let annFiles = try ClientExecutableTests.Files(password: "ann-password")
        let bobFiles = try ClientExecutableTests.Files(password: "bob-password")
        let tmux = try await Tmux(environment: ["PS1": "$ ", "LANG": "C.UTF-8", "NO_COLOR": "1", "HOME": annFiles.directory.path])
        defer { Task { await tmux.stop() } }
        try await tmux.waitForScreen("the shell's prompt") { $0.last == "$" }
        let settings = annFiles.directory.appendingPathComponent("stty").path
        try await tmux.type("stty -g > \(settings).before; clear")
        try await tmux.press("Enter")
        try await tmux.waitForScreen("a clear screen") { $0 == ["$"] }

        let command = [ChildProcess.productPath("im-client"), "ann", "--port", server.port,
                       "--data-dir", annFiles.dataDirectory, "--password-file", annFiles.passwordFile]
        try await tmux.type(command.joined(separator: " "))
        try await tmux.press("Enter")
        try await tmux.waitForScreen("ann online") { $0.suffix(2) == ["[online as ann]", ">"] }
        try await tmux.type("half typed")
        try await tmux.waitForScreen("the half-typed line") { $0.last == "> half typed" }

        let bob = try ChildProcess.startProduct("im-client", [
            "bob", "--port", server.port, "--data-dir", bobFiles.dataDirectory, "--password-file", bobFiles.passwordFile,
        ])
        defer { bob.stop() }
        for text in ["one", "two", "three"] { bob.type("/to ann \(text)") }
        let rows = try await tmux.waitForScreen("bob's three messages") { rows in
            rows.compactMap(Self.untimed).contains("bob (direct): three")
        }
        let shown = rows.compactMap(Self.untimed)
        #expect(shown.filter { $0.hasPrefix("bob (direct)") } == ["bob (direct): one", "bob (direct): two", "bob (direct): three"])
        #expect(rows.suffix(2) == ["[online as ann]", "> half typed"])
        let cursor = try await tmux.cursor()
        #expect(cursor.column == 12 && cursor.row == rows.count - 1)

        try await tmux.type(" and finished")
        try await tmux.press("Enter")
        let sent = try await tmux.waitForScreen("the line sent and stored") { rows in
            rows.compactMap(Self.untimed).contains("✓ #1 stored") && rows.last == ">"
        }
        #expect(sent.compactMap(Self.untimed).filter { $0.contains("#1") } == ["#1 → everyone: half typed and finished", "✓ #1 stored"])
        #expect(sent.suffix(2) == ["[online as ann]", ">"])
        #expect(try await bob.lines.first { $0.hasPrefix("ann:") } == "ann: half typed and finished")

        // Ctrl-C with a half-typed line: nothing of it reaches the shell.
        try await tmux.type("never sent")
        try await tmux.waitForScreen("the second half-typed line") { $0.last == "> never sent" }
        try await tmux.press("C-c")
        let after = try await tmux.waitForScreen("the shell's prompt after the client") { $0.last == "$" }
        #expect(!after.contains { $0.contains("never sent") })
        #expect(!after.contains { $0.hasPrefix("[online as ann") })
        try await tmux.type("echo \"exit $?\"; stty -g > \(settings).after")
        try await tmux.press("Enter")
        let echoed = try await tmux.waitForScreen("the shell's answer") { $0.last == "$" && $0.contains("exit 130") }
        #expect(echoed.suffix(3).first == "$ echo \"exit $?\"; stty -g > \(settings).after")
        let before = try String(contentsOfFile: settings + ".before", encoding: .utf8)
        try await waitUntil("stty's output") { FileManager.default.fileExists(atPath: settings + ".after") }
        #expect(try String(contentsOfFile: settings + ".after", encoding: .utf8) == before)
    }
}
