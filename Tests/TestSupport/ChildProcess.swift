import AsyncSocket
import Dispatch
import Foundation
import Glibc
import Testing

/// A program run by a test with pipes on its standard input and output (standard error goes to the same
/// pipe as output), started with `posix_spawn(3)` directly.
///
/// Not Foundation's `Process`: with many tests running at once, its pipes and file handles can close
/// a descriptor number twice (swiftlang/swift#57827), and the second close hits whatever socket another
/// test has been given that number since. Here every descriptor is closed exactly once, by its owner.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Output lines as they arrive (without the newline).
    public let lines = EventRecorder<String>()
    private let input: LockedValue<Int32>
    private let output: LockedValue<Data>
    private let finished = DispatchSemaphore(value: 0)
    /// The exit status once reaped; a reaped pid is never signalled again (it may belong to another process).
    private let exit = LockedValue<Int32?>(nil)

    /// Starts `path` with `arguments` (not including the program name) and environment `environment`
    /// (this process's when nil). The child gets only its standard input, output and error: every other
    /// descriptor is closed in it (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34), so it holds
    /// no socket of a test running beside it, whoever opened that socket without close-on-exec
    /// (libnats does; so does `swift test` with those it hands the test process), unless
    /// `inheritingDescriptors` (``inheritedDescriptors()`` uses that to see what would leak).
    public init(_ path: String, _ arguments: [String], environment: [String: String]? = nil, inheritingDescriptors: Bool = false) throws {
        // Unix socket pairs serve as pipes: they can be made close-on-exec atomically (so no other
        // test's child inherits them), and [0] / [1] are used as a pipe's read and write ends.
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &stdinPipe) == 0 else { throw ChildProcessError("socketpair: \(errno)") }
        guard socketpair(AF_UNIX, type, 0, &stdoutPipe) == 0 else {
            stdinPipe.forEach { close($0) }
            throw ChildProcessError("socketpair: \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 2)
        if !inheritingDescriptors, let addclosefrom = glibcExtension("posix_spawn_file_actions_addclosefrom_np", as: AddClosefrom.self) {
            _ = addclosefrom(&actions, 3)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let envp = environmentStrings.map { $0.map { strdup($0) } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        var code: Int32 = 0
        // ETXTBSY: an executable the test has just written (a copy of a product) is still open for writing
        // in a child that another test's thread forked meanwhile, until that child's exec closes it
        // (StaticFilesTraversalTests, once in a soak). That lasts a moment: tried again, at most 50 times.
        for attempt in 0..<50 {
            if attempt > 0 { usleep(10_000) }
            code = envp.map { posix_spawnp(&pid, path, &actions, nil, argv, $0) } ?? posix_spawnp(&pid, path, &actions, nil, argv, environ)
            if code != ETXTBSY { break }
        }
        // The child's ends belong to the child now (or to nobody, if the spawn failed).
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard code == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw ChildProcessError("posix_spawn \(path): \(String(cString: strerror(code)))")
        }
        self.pid = pid
        input = LockedValue(stdinPipe[1])
        output = LockedValue(Data())
        let readEnd = stdoutPipe[0]
        let lines = self.lines
        let output = self.output
        let finished = self.finished
        Thread {
            var pending = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(readEnd, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: chunk[..<count])
                output.withLock { $0.append(contentsOf: chunk[..<count]) }
                while let newline = pending.firstIndex(of: 0x0A) {
                    lines.record(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            close(readEnd)
            finished.signal()
        }.start()
    }

    /// Writes `line` and a newline to the program's standard input.
    public func type(_ line: String) { write(Data((line + "\n").utf8)) }

    /// Writes `data` to the program's standard input.
    public func write(_ data: Data) {
        input.withLock { fd in
            guard fd >= 0 else { return }
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count, let base = raw.baseAddress {
                    let written = Glibc.write(fd, base + offset, raw.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }

    /// Closes the program's standard input (end of file). Idempotent.
    public func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Waits (up to `limit`) for the program to exit and returns its exit status; its output is then
    /// complete in ``allOutput``.
    public func exitStatus(within limit: Duration = .seconds(10)) async throws -> Int32 {
        let status = await runOnAThread { self.waitForExit(within: limit) }  // polls: not on the pool
        guard let status else { throw WaitTimedOut(description: "pid \(pid) still running after \(limit)") }
        return status
    }

    /// Blocks until the program exits (up to `limit`) and its output is read to the end; returns its
    /// exit status, or nil when it is still running.
    public func waitForExit(within limit: Duration = .seconds(10)) -> Int32? {
        expectOffThePool("ChildProcess.waitForExit")
        if let status = exit.withLock({ $0 }) { return status }
        let deadline = ContinuousClock.now + TestTiming.hangLimit(limit)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if (result < 0 && errno != EINTR) || ContinuousClock.now >= deadline { return nil }
            usleep(2000)
        }
        let code = (status >> 8) & 0xFF
        exit.withLock { $0 = code }
        _ = finished.wait(timeout: .now() + 5)
        return code
    }

    /// Everything the program wrote so far.
    public var allOutput: Data { output.withLock { $0 } }

    /// Kills the program if it still runs and reaps it.
    public func stop() {
        closeInput()
        guard exit.withLock({ $0 }) == nil else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        if waitpid(pid, &status, 0) == pid { exit.withLock { $0 = -1 } }
    }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension ChildProcess {
    /// The descriptors above 2 that a program started now inherits from this process (`inheriting`:
    /// started with `inheritingDescriptors`, as any `posix_spawn` or `fork` without closing does; else
    /// as the tests start their children), each as `N -> TARGET` (`socket:[INODE]`,
    /// `anon_inode:[eventpoll]`, a path): `ls -l /proc/PID/fd` of a `/bin/sh` started for it. Waits up
    /// to 10 s for it.
    public static func inheritedDescriptors(inheriting: Bool = true) async throws -> [String] {
        let child = try ChildProcess("/bin/sh", ["-c", "ls -l /proc/$$/fd"], inheritingDescriptors: inheriting)
        defer { child.stop() }
        let status = try await child.exitStatus()
        let listing = String(decoding: child.allOutput, as: UTF8.self)
        guard status == 0 else { throw ChildProcessError("ls -l /proc/PID/fd exited \(status): \(listing)") }
        return listing.split(separator: "\n").compactMap { line -> String? in
            let parts = line.components(separatedBy: " -> ")
            guard parts.count == 2, let number = parts[0].split(separator: " ").last.flatMap({ Int($0) }), number > 2 else { return nil }
            return "\(number) -> \(parts[1])"
        }
    }
}

extension ChildProcess {
    /// The `socket:[INODE]` names of this process's (and everyone's) IPv4 TCP sockets connected to
    /// 127.0.0.1:`port`, from `/proc/net/tcp` (columns: local, remote as hex `ADDR:PORT`, …, inode).
    public static func loopbackSockets(connectedTo port: UInt16) throws -> Set<String> {
        // Read to the end: procfs reports a size of 0, and a whole-file read may stop after a page.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { throw ChildProcessError("cannot open /proc/net/tcp") }
        defer { try? handle.close() }
        let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        let remote = "0100007F:" + String(format: "%04X", port)
        var names: Set<String> = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[2] == remote else { continue }
            names.insert("socket:[\(fields[9])]")
        }
        return names
    }
}

extension ChildProcess {
    /// Starts the package's executable `name` with `arguments` (see ``productPath(_:)``).
    /// - Throws: ``ChildProcessError`` when it cannot be started (not built, say).
    public static func startProduct(_ name: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(productPath(name), arguments)
    }

    /// The path of the package's executable `name`, which `swift build` puts next to the test binary
    /// (the test target must depend on it).
    public static func productPath(_ name: String) -> String {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = binary.deletingLastPathComponent()
        // The test binary may sit inside a bundle (…/X.xctest/Contents/MacOS on Apple platforms).
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path),
            directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }
}
