import Testing

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

extension Trait where Self == OffThePoolTrait {
    /// For tests whose result hangs on a long chain of awaits one after another (hundreds of small
    /// reads and writes): each resumption waits for a free thread, and on the two-thread cooperative
    /// pool, where the whole run is queued at its start, a chain of 450 missed a 10 s limit that it
    /// meets in 0.03 s alone. Here they resume on a thread of their own (see ``ThreadExecutor`` for
    /// which tasks inherit it), which is what the behaviour under test, not the pool's latency, needs.
    /// Also for tests that open SQLite files from the test's own code: opening one waits for
    /// `fdatasync`, which took over a second once while other tests wrote to the disk, and the stall
    /// watchdog failed the run (`ChatBenchSmokeTests`, `ClientPresenceTests`). So every suite or test
    /// that opens a SQLite store, or a version 2 `ChatClient` with a data directory, from its own code
    /// carries it (the store suites, the name suites, the client suites on `ClientFixture`).
    public static var offThePool: Self { OffThePoolTrait() }
}

/// A debug check for test helpers that block their thread (waiting for a child process, a semaphore,
/// a poll loop): records an issue when called from a task that runs on Swift's cooperative pool (a
/// task with no executor preference; here the pool has two threads, and one blocked thread halves
/// what every other test can do). Call it from such helpers; run the caller in `runOnAThread` or in a
/// ``Trait/cpuBound`` / ``Trait/offThePool`` test instead. Compiled out of release builds.
public func expectOffThePool(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #if DEBUG
        if isOnTheCooperativePool() {
            Issue.record(
                "\(what) blocks a thread of Swift's cooperative pool: run it in runOnAThread, or mark the test .cpuBound or .offThePool",
                sourceLocation: sourceLocation)
        }
    #endif
}

/// True when the caller runs in a task on Swift's cooperative pool: a task with no executor
/// preference (``Trait/offThePool``, ``Trait/cpuBound`` and `runOnAThread` give one).
public func isOnTheCooperativePool() -> Bool {
    withUnsafeCurrentTask { task in task.map { $0.unownedTaskExecutor == nil } ?? false }
}
