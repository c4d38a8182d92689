import AsyncSocket
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts copies of this executable as worker processes and waits for them (`socket-bench server … --workers N`).
enum WorkerProcesses {
    /// Starts `count` processes of this executable with `arguments` plus `--parent PID` (`posix_spawn(3)`;
    /// they share the parent's standard output), and returns once all have ended: 0 if every one exited 0
    /// or was stopped by SIGTERM/SIGINT, else 1.
    ///
    /// SIGTERM or SIGINT to this process, at any moment from the start, sends SIGTERM to every worker:
    /// the signals are blocked before the first worker exists and taken with `sigwait(3)`, so none is lost
    /// or kills the parent while workers live. Workers start with every signal at its default action
    /// (a shell may have started this process with SIGINT ignored), and leave by themselves when the
    /// parent is gone (see ``ServerCommand``'s `--parent`).
    static func run(count: Int, arguments: [String]) -> Int32 {
        var waited = signalSet([SIGTERM, SIGINT, SIGCHLD])
        pthread_sigmask(SIG_BLOCK, &waited, nil)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noneBlocked = signalSet([])
        var defaults = signalSet([SIGTERM, SIGINT, SIGPIPE])
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let path = executablePath()
        let workerArguments = arguments + ["--parent", "\(getpid())"]
        var running = Set<pid_t>()
        for _ in 0..<count {
            let argv = ([path] + workerArguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid = pid_t()
            let code = posix_spawn(&pid, path, nil, &attributes, argv, environ)
            guard code == 0 else {
                Output.complain("cannot start a worker: \(String(cString: strerror(code)))")
                running.forEach { kill($0, SIGTERM) }
                return 1
            }
            running.insert(pid)
        }

        var failed = false
        var stopping = false
        while !running.isEmpty {
            var received: Int32 = 0
            guard sigwait(&waited, &received) == 0 else { continue }
            if (received == SIGTERM || received == SIGINT) && !stopping {
                stopping = true
                running.forEach { kill($0, SIGTERM) }
            }
            var status: Int32 = 0
            while case let pid = waitpid(-1, &status, WNOHANG), pid > 0 {
                running.remove(pid)
                let exitedCleanly = (status & 0x7f) == 0 && (status >> 8) & 0xff == 0
                let stoppedBySignal = [SIGTERM, SIGINT].contains(status & 0x7f)
                if !exitedCleanly && !stoppedBySignal { failed = true }
            }
        }
        return failed ? 1 : 0
    }

    /// Leaves the process (status 0) as soon as its parent is no longer `parent`: the parent ended,
    /// even by SIGKILL, and the worker was handed to init. Checks once a second, on a thread of its own.
    static func exitWhenOrphaned(parent: pid_t) {
        let thread = Thread {
            while getppid() == parent { sleep(1) }
            exit(0)
        }
        thread.name = "socket-bench-parent-watch"
        thread.start()
    }

    private static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    /// This process's executable (`/proc/self/exe` on Linux, else the path it was started with).
    private static func executablePath() -> String {
        #if os(Linux)
            if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        return CommandLine.arguments[0]
    }
}
