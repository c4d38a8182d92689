import Foundation
import Testing
import TestSupport

/// `im-server` started by a test: any free port on 127.0.0.1, no LAN discovery (it would bind UDP
/// port 7777 of the machine; DiscoveryTests covers it on ports of its own), messages in memory.
public struct ChatServerProcess {
    public let process: ChildProcess
    /// The port it listens on, from its first line.
    public let port: String

    /// Starts it and waits for its listening line.
    public static func start() async throws -> ChatServerProcess {
        let server = try ChildProcess.startProduct("im-server", ["--port", "0", "--no-discovery", "--store", ":memory:"])
        let listening = logText(try await server.lines.next())
        #expect(listening.hasPrefix("im-server listening on 127.0.0.1:") && listening.hasSuffix(" (messages kept in memory only)"))
        guard let port = listening.split(separator: ":").last?.split(separator: " ").first.map(String.init) else {
            server.stop()
            throw ChildProcessError("no port in \(listening.debugDescription)")
        }
        return ChatServerProcess(process: server, port: port)
    }

    public func stop() { process.stop() }
}
