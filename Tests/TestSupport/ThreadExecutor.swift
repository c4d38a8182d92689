import Foundation

/// A `TaskExecutor` that runs every job on one thread of its own, outside Swift's cooperative pool.
///
/// Why: on Linux the cooperative pool has one thread per core (two here), and a job that computes or
/// blocks for seconds holds one of them for that long. ``CPUBoundTrait`` and ``OffThePoolTrait`` run
/// test cases with one of these as their preference (child tasks and `async let` inherit it, `Task {}`
/// does not), so the operating system shares the cores between them and the pool, and the socket
/// tests' continuations still find a free pool thread to resume on.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor of the ``Trait/cpuBound`` test cases.
    public static let cpuBound = ThreadExecutor(name: "cpu-bound-tests")
    /// The executor of the ``Trait/offThePool`` test cases (they share its thread, suspending in turn).
    public static let offThePool = ThreadExecutor(name: "off-the-pool-tests")

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
