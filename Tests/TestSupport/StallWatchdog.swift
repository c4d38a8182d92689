import Foundation
import Testing

/// The debug check that no test blocks Swift Testing's cooperative pool (two threads here): a thread
/// starts a task on the pool every 100 ms and waits for it to start. When it has not started within
/// ``limit``, tests are blocking the pool's threads (a semaphore, `Thread.sleep`, a blocking NATS call
/// or pty read on it), and every other test's awaits wait with them. The check then records an issue,
/// which fails the run: Swift Testing shows it as `Test «unknown» recorded an issue` (no test is
/// current on the watchdog's thread), so the issue quotes the test code on the stacks, from every
/// thread's backtrace (`gdb -batch -p PID -ex "thread apply all bt"`, when gdb is installed), written
/// whole to a file it names (in `$STALL_WATCHDOG`, default `/tmp`). One issue per
/// stall; the probe goes on once the pool is free.
///
/// A full run's probes, measured: none took 100 ms, with both cores also kept busy by two other
/// processes (docs/TESTING.md). Started by the first ``EventRecorder``; debug builds only.
public enum StallWatchdog {
    /// How long a probe may wait for the pool: 1 s, or 10 s under ThreadSanitizer (which runs
    /// everything 5–15 times slower).
    static let limit: Duration = isThreadSanitized ? .seconds(10) : .seconds(1)

    static let start: Void = {
        #if DEBUG
            let thread = Thread { watch() }
            thread.name = "stall-watchdog"
            thread.start()
        #endif
    }()

    private static func watch() {
        let directory = ProcessInfo.processInfo.environment["STALL_WATCHDOG"] ?? "/tmp"
        let limitNanoseconds = Int(limit.components.seconds) * 1_000_000_000
        var stalls = 0
        while true {
            let started = DispatchSemaphore(value: 0)
            Task.detached { started.signal() }
            if started.wait(timeout: .now() + .nanoseconds(limitNanoseconds)) == .timedOut {
                stalls += 1
                let path = "\(directory)/stall-\(getpid())-\(stalls).txt"
                let backtrace = threadBacktraces(to: path)
                Issue.record(
                    Comment(
                        rawValue: "Swift's cooperative pool started no task for \(limit): a test blocks its threads. "
                            + "Test code on the stacks: \(testFrames(in: backtrace).joined(separator: ", ")). "
                            + "All threads: \(backtrace.isEmpty ? "(gdb is not installed)" : path)"))
                started.wait()
            }
            usleep(100_000)
        }
    }

    /// Every thread's backtrace from gdb (written to `path` too); empty without gdb.
    private static func threadBacktraces(to path: String) -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        process.arguments = ["-batch", "-p", "\(getpid())", "-ex", "thread apply all bt"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        _ = FileManager.default.createFile(atPath: path, contents: data)
        return String(decoding: data, as: UTF8.self)
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

    /// True when this process runs under ThreadSanitizer (its runtime is linked in).
    private static let isThreadSanitized: Bool = dlsym(nil, "__tsan_init") != nil  // nil: RTLD_DEFAULT
}
