import ChatTestSupport
import Foundation
import Testing
import TestSupport

@Suite struct EndToEndTests {
    @Test func twoClientsChatThroughTheServerExecutable() async throws {
        let chatServer = try await ChatServerProcess.start()
        defer { chatServer.stop() }
        let server = chatServer.process
        let port = chatServer.port
        let limits = logText(try await server.lines.next())
        #expect(
            limits.hasPrefix("im-server limits: ")
                && limits.hasSuffix(
                    " connections, 20 messages/s per connection (burst 300), login within 10 s, frames within 10 s")
        )

        let ann = try ChildProcess.startProduct("im-client", ["ann", "--port", port, "--protocol", "1"])
        defer { ann.stop() }
        #expect(try await ann.lines.next(2) == ["* connected to 127.0.0.1:\(port)", "* logged in as ann; online: nobody else"])
        let bob = try ChildProcess.startProduct("im-client", ["bob", "--port", port, "--protocol", "1"])
        defer { bob.stop() }
        #expect(try await bob.lines.next(2) == ["* connected to 127.0.0.1:\(port)", "* logged in as bob; online: ann"])
        #expect(try await ann.lines.next() == "* bob joined")

        bob.type("/to ann hello ann, this is bob")
        #expect(try await bob.lines.next() == "sent to ann: hello ann, this is bob")
        #expect(try await ann.lines.next() == "bob (direct): hello ann, this is bob")
        ann.type("hello everyone")
        #expect(try await ann.lines.next() == "sent broadcast: hello everyone")  // own messages are shown
        #expect(try await bob.lines.next() == "ann: hello everyone")

        // End of input: each sends what is queued and leaves cleanly.
        bob.closeInput()
        #expect(try await bob.lines.next() == "* disconnected (by user)")
        #expect(try await bob.exitStatus() == 0)
        #expect(try await ann.lines.next() == "* bob left")
        ann.type("/quit")
        #expect(try await ann.exitStatus() == 0)

        let log = try await server.lines.next(4).map { logText($0).components(separatedBy: " from ")[0] }
        #expect(log == ["login ann", "login bob", "logout bob (closed by client)", "logout ann (closed by client)"])
    }
}
