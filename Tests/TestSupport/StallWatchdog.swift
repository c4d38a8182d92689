import Foundation

/// A diagnostic for the suite's rare stalls (every waiting test times out at once after ~10 s): with
/// `STALL_WATCHDOG=DIR` in the environment, a thread checks every 100 ms that a task on the Swift
/// concurrency pool still starts within 2 s; when one does not, it writes every thread's backtrace
/// (`gdb -batch -p PID -ex "thread apply all bt"`) to `DIR/stall-PID-N.txt`, at most 3 times. Off
/// (nothing runs) without the variable. Started by the first ``EventRecorder``.
enum StallWatchdog {
    static let start: Void = {
        guard let directory = ProcessInfo.processInfo.environment["STALL_WATCHDOG"] else { return }
        let thread = Thread { watch(directory) }
        thread.name = "stall-watchdog"
        thread.start()
    }()

    private static func watch(_ directory: String) {
        var dumps = 0
        while dumps < 3 {
            let started = DispatchSemaphore(value: 0)
            Task.detached { started.signal() }
            if started.wait(timeout: .now() + 2) == .timedOut {
                dumps += 1
                let path = "\(directory)/stall-\(getpid())-\(dumps).txt"
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
                process.arguments = ["-batch", "-p", "\(getpid())", "-ex", "thread apply all bt"]
                _ = FileManager.default.createFile(atPath: path, contents: nil)
                process.standardOutput = FileHandle(forWritingAtPath: path)
                process.standardError = FileHandle.nullDevice
                try? process.run()
                process.waitUntilExit()
                _ = started.wait(timeout: .now() + 30)
            }
            usleep(100_000)
        }
    }
}
