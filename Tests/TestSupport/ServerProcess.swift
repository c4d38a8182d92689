// Linux only: the servers come from Debian's packages, and the child is started with glibc's
// posix_spawn extensions.
#if os(Linux)
    import AsyncSocket
    import Foundation
    import Glibc

    /// A server we did not write (redis-server, nginx, socat, nats-server), run as a child process on a
    /// free loopback port with its own temporary directory, for one test.
    ///
    /// The child gets its own process group (so ``stop()`` also ends what it forked, such as socat's
    /// per-connection children), `/dev/null` as standard input, its standard output and error in
    /// `server.log` in its directory, no inherited descriptors beyond those three, and default signal
    /// handling. It runs under coreutils' `timeout`, so a server left behind by a crashed test run dies
    /// by itself after ``lifetimeLimit``.
    ///
    /// For outage tests, ``kill()`` ends it as a crash would (SIGKILL) and keeps its port and directory,
    /// and ``restart()`` starts the same command again on them.
    public final class ServerProcess: Sendable {
        /// The program's name, for messages.
        public let name: String
        /// The loopback port it listens on.
        public let port: UInt16
        /// Its own directory (configuration, files, log); removed by ``stop()``.
        public let directory: URL
        /// The full command, for ``restart()``.
        private let command: [String]
        /// The running child, nil after ``kill()`` until ``restart()``.
        private let child = LockedValue<pid_t?>(nil)
        private let stopped = LockedValue(false)

        /// The process (and process group) id of the child; -1 while it is killed.
        public var pid: pid_t { child.withLock { $0 } ?? -1 }

        /// The longest a server may live, whatever happens to the test process.
        public static let lifetimeLimit = 120
        /// How long ``start(_:in:prepare:arguments:)`` waits for the server to accept a connection.
        public static let startLimit: Duration = .seconds(10)

        public var logURL: URL { directory.appendingPathComponent("server.log") }

        /// What the server has written to its standard output and error so far.
        public var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

        private init(name: String, port: UInt16, directory: URL, command: [String], pid: pid_t) {
            self.name = name
            self.port = port
            self.directory = directory
            self.command = command
            child.withLock { $0 = pid }
        }

        /// Makes a fresh directory for a server (mode 0755, so a server that drops privileges can still
        /// read what the test puts there).
        public static func makeDirectory(for name: String) throws -> URL {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("test-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            return directory
        }

        /// Starts `program` with the arguments `arguments(port)` for a fresh free loopback port, in
        /// `directory` (made by ``makeDirectory(for:)``; `prepare(port)` may write configuration there
        /// first), and returns once it accepts connections on that port.
        ///
        /// A server that exits before accepting (another process took the port in between) is tried
        /// again on another port, three times in all.
        /// - Throws: ``ServerError`` when the program is missing, will not start, or does not accept
        ///   within ``startLimit``.
        public static func start(
            _ program: String,
            in directory: URL,
            prepare: (UInt16) throws -> Void = { _ in },
            arguments: (UInt16) -> [String]
        ) async throws -> ServerProcess {
            let executable = try locate(program)
            var failures: [String] = []
            for _ in 0..<3 {
                let port = unusedLoopbackPort()
                try prepare(port)
                let log = directory.appendingPathComponent("server.log")
                let command = ["timeout", "-s", "KILL", "\(lifetimeLimit * TestTiming.slowdown)", executable] + arguments(port)
                let pid = try spawn("/usr/bin/timeout", command, in: directory, log: log)
                let server = ServerProcess(name: program, port: port, directory: directory, command: command, pid: pid)
                switch await server.waitUntilAccepting(within: startLimit) {
                case .accepting:
                    return server
                case .exited(let status):
                    failures.append("\(program) on port \(port) \(describe(status)) before accepting:\n\(server.log)")
                    server.stop(removingDirectory: false)
                case .timedOut:
                    server.stop()
                    throw ServerError("\(program) did not accept connections on 127.0.0.1:\(port) within \(startLimit):\n\(server.log)")
                }
            }
            try? FileManager.default.removeItem(at: directory)
            throw ServerError(failures.joined(separator: "\n"))
        }

        /// Ends the server and everything it forked (SIGKILL to its process group), reaps it, and
        /// removes its directory. Safe to call more than once.
        public func stop() { stop(removingDirectory: true) }

        private func stop(removingDirectory: Bool) {
            guard
                !stopped.withLock({ stopped in
                    defer { stopped = true }; return stopped
                })
            else { return }
            kill()
            if removingDirectory { try? FileManager.default.removeItem(at: directory) }
        }

        /// Ends the server as a crash would (SIGKILL to its process group, no shutdown of its own),
        /// reaps it, and returns once its port refuses connections, keeping port and directory for
        /// ``restart()``. Nothing when it is not running.
        ///
        /// The child reaped is `timeout`; the server itself, its child, may still be exiting then, with
        /// its listening socket open: a client connecting in that moment would be accepted and cut off.
        /// So the port is polled (every millisecond, for at most ``startLimit``) until it refuses.
        public func kill() {
            guard
                let pid = child.withLock({ child in
                    defer { child = nil }; return child
                })
            else { return }
            Glibc.kill(-pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let deadline = ContinuousClock.now + TestTiming.hangLimit(ServerProcess.startLimit)
            while ServerProcess.canConnect(to: port) && ContinuousClock.now < deadline { usleep(1000) }
        }

        /// Starts the same command again, on the same port and in the same directory, after ``kill()``
        /// (which it does first if the server still runs), and returns once it accepts connections.
        /// - Throws: ``ServerError`` when it exits or does not accept within ``startLimit`` (another
        ///   process may have taken the port meanwhile), or after ``stop()``.
        public func restart() async throws {
            kill()
            guard !stopped.withLock({ $0 }) else { throw ServerError("\(name) was stopped; it cannot restart") }
            let pid = try ServerProcess.spawn("/usr/bin/timeout", command, in: directory, log: logURL)
            child.withLock { $0 = pid }
            switch await waitUntilAccepting(within: ServerProcess.startLimit) {
            case .accepting:
                return
            case .exited(let status):
                throw ServerError("\(name) on port \(port) \(describe(status)) on restart before accepting:\n\(log)")
            case .timedOut:
                kill()
                throw ServerError(
                    "\(name) did not accept connections on 127.0.0.1:\(port) within \(ServerProcess.startLimit) after a restart:\n\(log)")
            }
        }

        enum Readiness { case accepting, exited(Int32), timedOut }

        /// Polls: a blocking connect to 127.0.0.1:`port` every 10 ms until one succeeds, the child exits,
        /// or `limit` passes.
        private func waitUntilAccepting(within limit: Duration) async -> Readiness {
            let deadline = ContinuousClock.now + TestTiming.hangLimit(limit)
            guard let pid = child.withLock({ $0 }) else { return .timedOut }
            while true {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    child.withLock { $0 = nil }
                    return .exited(status)
                }
                if ServerProcess.canConnect(to: port) {
                    // The connection may have reached someone else's listener; make sure ours is alive.
                    if waitpid(pid, &status, WNOHANG) == pid {
                        child.withLock { $0 = nil }
                        return .exited(status)
                    }
                    return .accepting
                }
                guard ContinuousClock.now < deadline else { return .timedOut }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        /// Whether a TCP connect to 127.0.0.1:`port` succeeds right now. The connection is closed at once.
        public static func canConnect(to port: UInt16) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return withLoopbackAddress(port: port) { connect(fd, $0, $1) } == 0
        }

        /// The full path of `program` in the usual places (`/usr/sbin` is often not on a user's PATH).
        public static func locate(_ program: String) throws -> String {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            let directories =
                path.split(separator: ":").map(String.init)
                + ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
            for directory in directories where !directory.isEmpty {
                let candidate = directory + "/" + program
                if access(candidate, X_OK) == 0 { return candidate }
            }
            throw ServerError("\(program) is not installed; run scripts/setup.sh (it installs the servers the tests start)")
        }

        /// posix_spawn(3)s `path` with `argv` in its own process group, working directory `directory`,
        /// standard input from /dev/null, standard output and error appended to `log`.
        public static func spawn(_ path: String, _ argv: [String], in directory: URL, log: URL) throws -> pid_t {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            // glibc's extensions (2.29, 2.34), which its headers declare only under _GNU_SOURCE.
            if let addchdir = glibcExtension("posix_spawn_file_actions_addchdir_np", as: AddChdir.self) {
                _ = addchdir(&actions, directory.path)
            }
            // Descriptors the test process opened without close-on-exec (unusedLoopbackPort's probe
            // socket, in a parallel test) must not leak into the server: a leaked socket keeps its port.
            if let addclosefrom = glibcExtension("posix_spawn_file_actions_addclosefrom_np", as: AddClosefrom.self) {
                _ = addclosefrom(&actions, 3)
            }

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
            posix_spawnattr_setpgroup(&attributes, 0)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var mask = sigset_t()
            sigemptyset(&mask)
            posix_spawnattr_setsigmask(&attributes, &mask)

            let cArguments = argv.map { strdup($0) } + [nil]
            defer { for argument in cArguments { free(argument) } }
            var pid: pid_t = 0
            let code = posix_spawn(&pid, path, &actions, &attributes, cArguments, environ)
            guard code == 0 else {
                throw ServerError("posix_spawn \(path): \(String(cString: strerror(code)))")
            }
            return pid
        }
    }

    typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// The C function `name` from the C library, looked up at run time; nil when this glibc lacks it.
    func glibcExtension<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    /// A program that connects to a test's listener (socat as a client), run like a ``ServerProcess``
    /// child: own process group, output in `client.log` in its own directory, under `timeout`.
    public final class ClientProcess: Sendable {
        public let name: String
        public let directory: URL
        public let pid: pid_t
        private let exited = LockedValue<Int32?>(nil)
        private let stopped = LockedValue(false)

        public var log: String { (try? String(contentsOf: directory.appendingPathComponent("client.log"), encoding: .utf8)) ?? "" }

        /// Starts `program` with `arguments` in `directory` (made by ``ServerProcess/makeDirectory(for:)``).
        public init(_ program: String, _ arguments: [String], in directory: URL) throws {
            name = program
            self.directory = directory
            let executable = try ServerProcess.locate(program)
            let lifetime = "\(ServerProcess.lifetimeLimit * TestTiming.slowdown)"
            pid = try ServerProcess.spawn(
                "/usr/bin/timeout", ["timeout", "-s", "KILL", lifetime, executable] + arguments,
                in: directory, log: directory.appendingPathComponent("client.log"))
        }

        /// Waits (polling every 10 ms, up to `limit`) for the program to exit and returns its exit code
        /// (128 + the signal number when a signal ended it).
        public func exitStatus(within limit: Duration = .seconds(10)) async throws -> Int32 {
            let deadline = ContinuousClock.now + TestTiming.hangLimit(limit)
            while true {
                if let status = exited.withLock({ $0 }) { return status }
                var status: Int32 = 0
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == pid {
                    let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                    exited.withLock { $0 = code }
                    return code
                }
                if reaped == -1 && errno != EINTR {
                    throw ServerError("waitpid(\(name)): \(String(cString: strerror(errno)))")
                }
                guard ContinuousClock.now < deadline else {
                    throw ServerError("\(name) still running after \(limit):\n\(log)")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        /// Kills the program's process group if it still runs, reaps it, and removes its directory.
        public func stop() {
            guard
                !stopped.withLock({ stopped in
                    defer { stopped = true }; return stopped
                })
            else { return }
            if exited.withLock({ $0 }) == nil {
                kill(-pid, SIGKILL)
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// A wait(2) status in words: "exited with status 1", "was killed by signal 9".
    func describe(_ status: Int32) -> String {
        (status & 0x7F) == 0 ? "exited with status \((status >> 8) & 0xFF)" : "was killed by signal \(status & 0x7F)"
    }

    /// A server would not start, or is not installed.
    public struct ServerError: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
#endif
