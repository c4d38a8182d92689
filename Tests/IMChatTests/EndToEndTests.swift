import Foundation
import Testing
import TestSupport

/// Runs one of the package's executables with pipes on its standard input and output.
enum RunningProgram {
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

    static func start(_ name: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(productsDirectory.appendingPathComponent(name).path, arguments)
    }
}

@Suite struct EndToEndTests {
    @Test func twoClientsChatThroughTheServerExecutable() async throws {
        let server = try RunningProgram.start("im-server", ["--port", "0"])
        defer { server.stop() }
        let listening = try await server.lines.next()
        #expect(listening.hasPrefix("im-server listening on 127.0.0.1:"))
        let port = try #require(listening.split(separator: ":").last.map(String.init))

        let ann = try RunningProgram.start("im-client", ["ann", "--port", port])
        defer { ann.stop() }
        #expect(try await ann.lines.next(2) == ["* connected to 127.0.0.1:\(port)", "* logged in as ann; online: nobody else"])
        let bob = try RunningProgram.start("im-client", ["bob", "--port", port])
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
