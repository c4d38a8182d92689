import Synchronization
import TestSupport
import Testing

/// The gate that keeps the CPU-bound suites (the framing suites here) from filling the cooperative pool
/// while socket tests with real timeouts wait to resume.
@Suite struct CPUBoundGateTests {
    final class Shared<Value: Sendable>: Sendable {
        private let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func withLock<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R { value.withLock(body) }
    }

    @Test func bodiesRunOneAtATimeInTheOrderTheyAsked() async {
        let gate = CPUBoundGate()
        let order = Shared<[String]>([])
        let (held, holder) = AsyncStream.makeStream(of: Void.self)
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let first = Task {
            await gate.run {
                holder.yield()
                for await _ in release { break }  // holds the gate until released
                order.withLock { $0.append("first") }
            }
        }
        for await _ in held { break }
        var others: [Task<Void, Never>] = []
        for name in ["second", "third", "fourth"] {
            others.append(Task { await gate.run { order.withLock { $0.append(name) } } })
            // Each asks only after the one before is queued, so the order they asked in is known.
            while await gate.waiting < others.count { await Task.yield() }
        }
        #expect(order.withLock { $0 }.isEmpty)  // all three wait while the first holds the gate
        releaser.yield()
        await first.value
        for task in others { await task.value }
        #expect(order.withLock { $0 } == ["first", "second", "third", "fourth"])
        #expect(await gate.waiting == 0)
    }

    /// `.cpuBound(minutes:)`'s limit: a body past it is reported once and cancelled (its cancellation
    /// not reported again); a body within it, nothing; an error within it is the body's.
    @Test func aBodyPastItsLimitIsReportedOnceAndCancelled() async throws {
        let ended = Shared<String>("")
        await withKnownIssue("the limit's report") {
            try await CPUBoundTrait.run(
                {
                    do { try await Task.sleep(for: .seconds(600)) } catch { ended.withLock { $0 = "\(type(of: error))" } }
                }, within: .milliseconds(20))
        }
        #expect(ended.withLock { $0 } == "CancellationError")
        try await CPUBoundTrait.run({}, within: .seconds(600))
        struct Refusal: Error, Equatable {}
        await #expect(throws: Refusal()) { try await CPUBoundTrait.run({ throw Refusal() }, within: .seconds(600)) }
    }

    @Test func neverTwoBodiesAtOnce() async {
        let gate = CPUBoundGate()
        let running = Shared((now: 0, most: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await gate.run {
                        running.withLock {
                            $0.now += 1; $0.most = max($0.most, $0.now)
                        }
                        await Task.yield()  // a suspension inside the body does not let another in
                        running.withLock { $0.now -= 1 }
                    }
                }
            }
        }
        #expect(running.withLock { $0.most } == 1)
    }
}
