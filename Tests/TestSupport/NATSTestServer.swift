import Foundation

/// nats-server for one test: `nats-server -js -a 127.0.0.1 -p PORT -sd DIR` on a free loopback
/// port, JetStream's files in the server's own temporary directory, started by ``ServerProcess``
/// (which waits, polling with a bound, until the port accepts). ``ServerProcess/kill()`` and
/// ``ServerProcess/restart()`` give an outage on the same port and store.
public enum NATSTestServer {
    public static func start() async throws -> ServerProcess {
        let directory = try ServerProcess.makeDirectory(for: "nats")
        return try await ServerProcess.start("nats-server", in: directory) { port in
            ["-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", directory.path]
        }
    }
}

extension ServerProcess {
    /// The server's client URL.
    public var natsURL: String { "nats://127.0.0.1:\(port)" }
}
