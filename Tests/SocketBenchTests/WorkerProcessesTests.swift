import Foundation
import Glibc
import Testing
import TestSupport

/// `socket-bench server --workers N` as a user runs it: the executable, its worker processes, signals.
@Suite struct WorkerProcessesTests {
    /// The pids in the workers' "… listening on 127.0.0.1:P (pid N, 1 loop)" lines.
    static func workerPIDs(of server: ChildProcess, count: Int) async throws -> [pid_t] {
        var pids: [pid_t] = []
        for _ in 0..<count {
            let line = try await server.lines.next()
            guard let range = line.range(of: #"pid (\d+)"#, options: .regularExpression),
                let pid = pid_t(line[range].dropFirst(4))
            else {
                throw ChildProcessError("not a listening line: \(line)")
            }
            pids.append(pid)
        }
        return pids
    }

    /// Regression: a SIGTERM early in the start-up was lost or left orphans; SIGINT from a script (which
    /// starts background jobs with SIGINT ignored) stopped nothing.
    @Test(arguments: [SIGTERM, SIGINT])
    func aStopSignalToTheParentEndsEveryWorker(signal: Int32) async throws {
        let port = ReservedLoopbackPort()
        port.release()
        // Started as a shell starts a background job: with SIGINT ignored (inherited across exec).
        let server = try ChildProcess(
            "/bin/sh",
            [
                "-c", #"trap "" INT; exec "$0" "$@""#, ChildProcess.productPath("socket-bench"),
                "server", "lp4", "--workers", "2", "--port", "\(port.port)"
            ])
        defer { server.stop() }
        let workers = try await Self.workerPIDs(of: server, count: 2)
        #expect(Set(workers).count == 2)
        #expect(!workers.contains(server.pid))
        kill(server.pid, signal)
        #expect(try await server.exitStatus() == 0)
        // The parent reaps its workers before it exits: none is left.
        for worker in workers { #expect(kill(worker, 0) == -1 && errno == ESRCH, "worker \(worker) still there") }
    }
}
