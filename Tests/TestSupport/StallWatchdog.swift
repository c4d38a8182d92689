import Foundation
import Testing

/// The debug check that no test blocks Swift Testing's cooperative pool (two threads here): a thread
/// starts a task on the pool every 100 ms and waits for it to start. When it has waited ``limit``
/// while none of the pool's threads could run (each asleep in the kernel: a semaphore,
/// `Thread.sleep`, a blocking NATS call or pty read on it), tests are blocking the pool, and every
/// other test's awaits wait with them. Time in which a pool thread was runnable does not count: a
/// machine short of CPU delays the probe too, without anything blocked. The check then records an
/// issue, which fails the run: Swift Testing shows it as `Test «unknown» recorded an issue` (no test
/// is current on the watchdog's thread), so the issue quotes the test code on the stacks, from every
/// thread's backtrace (`gdb -batch -p PID -ex "thread apply all bt"`, when gdb is installed), written
/// whole to a file it names (in `$STALL_WATCHDOG`, default `/tmp`). One issue per stall; the probe
/// goes on once the pool is free.
///
/// The pool's threads are Dispatch's workers (named `com.apple.root.*-qos`, the kernel keeps their
/// last 15 characters); so are the threads they start, which keep the name: a test's event loop or
/// helper thread that is running keeps the check quiet (it errs on the side of no issue). States come
/// from `/proc/self/task/TID/stat`. Found so far: a libnats deadlock after its use-after-free
/// (docs/TESTING.md), two pool threads blocked in `natsConn_close` and `kvWatcher_Stop` for minutes. Calibrated: in a full run
/// no probe waited 100 ms, also with both cores kept busy by two other processes; a test that blocks
/// both pool threads for 2 s fails the run (docs/TESTING.md). Started by the first
/// ``EventRecorder``; debug builds only.
public enum StallWatchdog {
    /// How long a probe may wait while no pool thread can run: 1 s, or 10 s under ThreadSanitizer
    /// (which runs everything 5–15 times slower).
    static let limit: Duration = TestTiming.hangLimit(.seconds(1))

    static let start: Void = {
        #if DEBUG
            Thread { watch() }.start()
        #endif
    }()

    private static func watch() {
        // Renamed from inside (/proc/thread-self/comm): a thread started from a Dispatch worker has
        // the worker's name, and would count as one of the pool's.
        let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        if comm >= 0 {
            _ = write(comm, "stall-watchdog", 14)
            close(comm)
        }
        let directory = ProcessInfo.processInfo.environment["STALL_WATCHDOG"] ?? "/tmp"
        let step = 100_000  // µs
        let limitSteps = Int(limit.components.seconds) * 1_000_000 / step
        var stalls = 0
        while true {
            let started = DispatchSemaphore(value: 0)
            Task.detached { started.signal() }
            var blockedSteps = 0
            while started.wait(timeout: .now() + .microseconds(step)) == .timedOut {
                if poolThreadsAllAsleep() { blockedSteps += 1 }
                guard blockedSteps == limitSteps else { continue }
                stalls += 1
                let path = "\(directory)/stall-\(getpid())-\(stalls).txt"
                let backtrace = threadBacktraces(to: path)
                Issue.record(
                    Comment(
                        rawValue: "Swift's cooperative pool started no task for \(limit) while its threads slept: a test blocks them. "
                            + "Test code on the stacks: \(testFrames(in: backtrace).joined(separator: ", ")). "
                            + "All threads: \(backtrace.isEmpty ? "(gdb is not installed)" : path)"))
            }
            usleep(useconds_t(step))
        }
    }

    /// True when every thread of the pool (Dispatch's `…-qos` workers, not the overcommit ones) is
    /// asleep in the kernel (state S or D), none running or runnable; false when there are none.
    private static func poolThreadsAllAsleep() -> Bool {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return false }
        var pool = 0
        for task in tasks {
            guard let stat = readSmallFile("/proc/self/task/\(task)/stat"),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { continue }
            let name = stat[stat.index(after: open)..<close]
            guard name.hasSuffix("-qos") else { continue }
            pool += 1
            let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
            guard state == "S" || state == "D" else { return false }
        }
        return pool > 0
    }

    /// A file of at most 4 KiB read with one `read(2)` (Foundation sees `/proc` files as empty).
    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &buffer, buffer.count)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }

    /// Every thread's backtrace from gdb, which writes it to `path` (not to a pipe: gdb stops every
    /// thread of this process, the one that would read the pipe too); empty without gdb.
    private static func threadBacktraces(to path: String) -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"),
            FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
        else { return "" }
        defer { try? file.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        process.arguments = ["-batch", "-p", "\(getpid())", "-ex", "thread apply all bt"]
        process.standardOutput = file
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        process.waitUntilExit()
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// Where the frames of `backtrace` in the tests' own sources are (`Tests/…:LINE`, the watchdog's own
    /// left out), each once, at most 20, innermost first.
    public static func testFrames(in backtrace: String) -> [String] {
        var frames: [String] = []
        for line in backtrace.split(separator: "\n") {
            guard let at = line.range(of: " at ", options: .backwards), let tests = line[at.upperBound...].range(of: "Tests/")
            else { continue }
            let place = String(line[tests.lowerBound...])
            guard !place.hasPrefix("Tests/TestSupport/StallWatchdog.swift"), !frames.contains(place), frames.count < 20 else { continue }
            frames.append(place)
        }
        return frames
    }
}
