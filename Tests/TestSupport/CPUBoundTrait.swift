import Foundation
import Testing

/// Lets at most one test case marked ``Trait/cpuBound`` run at a time in this process; the others wait
/// suspended (holding no thread) and start in the order they asked.
///
/// Why: Swift Testing starts every test of a parallel run at once, on the cooperative pool, which on
/// Linux is the default-QoS dispatch pool of one thread per core (two here) and which also runs every
/// delegate queue and `DispatchQueue.global()` job. It serves jobs first in, first out. Started all
/// together, the synchronous framing tests (seconds of CPU, and `waitpid` on Python) queued ahead of
/// everything else, so a socket test that had just queued a read with a 5 s timeout resumed from its
/// next `await` 5–20 s later: its timeout had fired and its peer was gone. Through this gate they
/// queue one at a time instead, so a resuming test waits for one of them at most.
public actor CPUBoundGate {
    public static let shared = CPUBoundGate()

    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Bodies waiting for their turn.
    public var waiting: Int { waiters.count }

    /// Runs `body` once no other body of this gate runs.
    public func run<Result: Sendable>(_ body: @Sendable () async throws -> Result) async rethrows -> Result {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            waiters.removeFirst().resume()  // stays busy: handed over
        }
    }
}

/// The trait behind ``Trait/cpuBound``: each test case runs inside ``CPUBoundGate/shared``, on the
/// thread of ``ThreadExecutor/cpuBound`` rather than on the cooperative pool.
///
/// With a time limit (``Trait/cpuBound(minutes:)``) the clock starts once the test's turn has come: a
/// `.timeLimit` trait would also count the wait for the gate, which on a quiet two-core machine reached
/// 80 s for tests at the back of the queue (a `CPU_GATE_TRACE` of a full run), and pushed tests of a
/// few seconds over their limits in a loaded full run.
public struct CPUBoundTrait: TestTrait, SuiteTrait, TestScoping {
    /// How long each test case may run once it holds the gate; nil: no limit of this trait's.
    public var limit: Duration?

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> CPUBoundTrait? {
        testCase == nil ? nil : self  // per test case, not around a whole suite
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        CPUBoundTrait.trace("wait \(test.name)")
        defer { CPUBoundTrait.trace("done \(test.name)") }
        try await CPUBoundGate.shared.run {
            CPUBoundTrait.trace("run \(test.name)")
            try await withTaskExecutorPreference(ThreadExecutor.cpuBound) {
                guard let limit else { return try await function() }
                try await Self.run(function, within: limit)
            }
        }
    }

    /// Runs `body`; if it has not returned within `limit`, records "Time limit exceeded" and cancels it
    /// (and still waits for it to return, as Swift Testing's own limit does; what it throws then, its
    /// cancellation, is not reported again). Errors `body` throws within the limit are rethrown.
    public static func run(_ body: @Sendable () async throws -> Void, within limit: Duration) async throws {
        try await withoutActuallyEscaping(body) { body in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await body()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return false
                }
                defer { group.cancelAll() }
                var timedOut = false
                while true {
                    do {
                        guard let finished = try await group.next(), !finished else { return }
                        timedOut = true
                        Issue.record("Time limit exceeded: \(limit) from the test's turn at the CPU-bound gate")
                        group.cancelAll()
                    } catch {
                        if timedOut { return }
                        throw error
                    }
                }
            }
        }
    }

    /// With `CPU_GATE_TRACE=FILE`, appends `line` to FILE (a diagnostic for a stuck gate).
    static func trace(_ line: String) {
        guard let path = ProcessInfo.processInfo.environment["CPU_GATE_TRACE"] else { return }
        let text = "\(Date().timeIntervalSince1970) \(line)\n"
        if let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(Data(text.utf8))
            try? handle.close()
        } else {
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        }
    }
}

extension Trait where Self == CPUBoundTrait {
    /// For tests that keep a thread busy for long (CPU-heavy loops, a blocking wait for a child process):
    /// they run one at a time on a thread of their own, so they cannot fill the cooperative pool while
    /// socket tests with real timeouts wait to resume. See ``CPUBoundGate`` and ``ThreadExecutor``.
    public static var cpuBound: Self { CPUBoundTrait() }

    /// ``cpuBound``, each test case limited to `minutes` once its turn has come (``TestTiming/slowdown``
    /// times as long under ThreadSanitizer). Use it instead of `.timeLimit` on CPU-bound tests.
    public static func cpuBound(minutes: Int) -> Self { CPUBoundTrait(limit: .seconds(60 * minutes * TestTiming.slowdown)) }
}
