import Foundation
import Testing

/// A `TaskExecutor` that runs every job on one thread of its own, outside Swift's cooperative pool.
///
/// Why: on Linux the cooperative pool has one thread per core (two here), and a job that computes or
/// blocks for seconds holds one of them for that long. ``CPUBoundTrait`` runs such test cases with this
/// executor as their preference, so the operating system shares the cores between them and the pool,
/// and the socket tests' continuations still find a free pool thread to resume on.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor of the ``Trait/cpuBound`` test cases.
    public static let cpuBound = ThreadExecutor(name: "cpu-bound-tests")

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by condition

    /// Starts the thread, named `name`; it runs for the life of the process.
    public init(name: String) {
        let thread = Thread { [unowned self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// The trait behind ``Trait/offThePool``: each test case runs with ``ThreadExecutor/offThePool`` as its
/// task executor preference.
public struct OffThePoolTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OffThePoolTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadExecutor.offThePool) { try await function() }
    }
}

extension ThreadExecutor {
    /// The executor of the ``Trait/offThePool`` test cases (they share its thread, suspending in turn).
    public static let offThePool = ThreadExecutor(name: "off-the-pool-tests")
}

extension Trait where Self == OffThePoolTrait {
    /// For tests whose result hangs on a long chain of awaits one after another (hundreds of small
    /// reads and writes): each resumption waits for a free thread, and on the suite's busy two-thread
    /// cooperative pool a chain of 700 missed a 10 s limit that it meets in 0.1 s alone. Here they
    /// resume on a thread of their own, which is what the behaviour under test (not the pool's
    /// latency) needs.
    public static var offThePool: Self { OffThePoolTrait() }
}
