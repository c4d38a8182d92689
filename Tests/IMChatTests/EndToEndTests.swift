import Foundation
import Testing
import TestSupport

/// Runs one of the package's executables with pipes on its standard input and output, recording each
/// output line as it arrives.
final class RunningProgram: Sendable {
    let process: Process
    let lines = EventRecorder<String>()
    private let input: FileHandle

    /// The directory `swift build` put this test binary and the executables in.
    static let productsDirectory: URL = {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = binary.deletingLastPathComponent()
        // The test binary may sit inside a bundle (…/X.xctest/Contents/MacOS on Apple platforms).
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("im-server").path),
              directory.pathComponents.count > 1 {
            directory.deleteLastPathComponent()
        }
        return directory
    }()

    init(_ name: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = RunningProgram.productsDirectory.appendingPathComponent(name)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        input = stdin.fileHandleForWriting
        let lines = self.lines
        let pending = LineSplitter()
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            for line in pending.add(data) { lines.record(line) }
        }
        try process.run()
    }

    /// Types `line` into the program.
    func type(_ line: String) { input.write(Data((line + "\n").utf8)) }

    /// Closes the program's standard input (end of file).
    func closeInput() { try? input.close() }

    /// Waits for the program to exit (up to `limit`) and returns its status.
    func exitStatus(within limit: Duration = .seconds(10)) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw WaitTimedOut(description: "\(process.executableURL?.lastPathComponent ?? "") still running") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}

/// Splits a byte stream into lines. Unchecked: used from one file handle's handler at a time.
private final class LineSplitter: @unchecked Sendable {
    private var buffer = Data()
    func add(_ data: Data) -> [String] {
        buffer.append(data)
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: 0x0A) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
        return lines
    }
}

@Suite struct EndToEndTests {
    @Test func twoClientsChatThroughTheServerExecutable() async throws {
        let server = try RunningProgram("im-server", ["--port", "0"])
        defer { server.stop() }
        let listening = try await server.lines.next()
        #expect(listening.hasPrefix("im-server listening on 127.0.0.1:"))
        let port = try #require(listening.split(separator: ":").last.map(String.init))

        let ann = try RunningProgram("im-client", ["ann", "--port", port])
        defer { ann.stop() }
        #expect(try await ann.lines.next(2) == ["* connected to 127.0.0.1:\(port)", "* logged in as ann; online: nobody else"])
        let bob = try RunningProgram("im-client", ["bob", "--port", port])
        defer { bob.stop() }
        #expect(try await bob.lines.next(2) == ["* connected to 127.0.0.1:\(port)", "* logged in as bob; online: ann"])
        #expect(try await ann.lines.next() == "* bob joined")

        bob.type("/to ann hello ann, this is bob")
        #expect(try await ann.lines.next() == "bob (direct): hello ann, this is bob")
        ann.type("hello everyone")
        #expect(try await bob.lines.next() == "ann: hello everyone")

        // End of input: each sends what is queued and leaves cleanly.
        bob.closeInput()
        #expect(try await bob.lines.next() == "* disconnected (by user)")
        #expect(try await bob.exitStatus() == 0)
        #expect(try await ann.lines.next() == "* bob left")
        ann.type("/quit")
        #expect(try await ann.exitStatus() == 0)

        let log = try await server.lines.next(4).map { $0.components(separatedBy: " from ")[0] }
        #expect(log == ["login ann", "login bob", "logout bob (closed by client)", "logout ann (closed by client)"])
    }
}
