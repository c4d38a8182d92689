import AsyncSocket
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts copies of this executable as worker processes and waits for them (`socket-bench server … --workers N`).
enum WorkerProcesses {
    /// Starts `count` processes of this executable with `arguments` (`posix_spawn(3)`; they share the
    /// parent's standard output), forwards SIGTERM and SIGINT to them, and returns once all have ended:
    /// 0 if every one exited 0 or was stopped by a forwarded signal, else 1.
    static func run(count: Int, arguments: [String]) -> Int32 {
        let path = executablePath()
        var workers: [pid_t] = []
        for _ in 0..<count {
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid = pid_t()
            let code = posix_spawn(&pid, path, nil, nil, argv, environ)
            guard code == 0 else {
                Output.complain("cannot start a worker: \(String(cString: strerror(code)))")
                workers.forEach { kill($0, SIGTERM) }
                return 1
            }
            workers.append(pid)
        }
        forwardStopSignals(to: workers)
        var failed = false
        for worker in workers {
            var status: Int32 = 0
            while waitpid(worker, &status, 0) < 0 && errno == EINTR {}
            let exitedCleanly = (status & 0x7f) == 0 && (status >> 8) & 0xff == 0
            let stoppedBySignal = [SIGTERM, SIGINT].contains(status & 0x7f)
            if !exitedCleanly && !stoppedBySignal { failed = true }
        }
        return failed ? 1 : 0
    }

    /// This process's executable (`/proc/self/exe` on Linux, else the path it was started with).
    private static func executablePath() -> String {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        return CommandLine.arguments[0]
    }

    /// SIGTERM and SIGINT stop the workers, then this process.
    private static func forwardStopSignals(to workers: [pid_t]) {
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                workers.forEach { kill($0, signalNumber) }
            }
            source.resume()
            retainedSources.withLock { $0.append(source) }
        }
    }

    private static let retainedSources = LockedValue<[any DispatchSourceSignal]>([])
}
