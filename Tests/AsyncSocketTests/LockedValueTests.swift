import AsyncSocket
import Dispatch
import Testing
import TestSupport

@Suite struct LockedValueTests {
    /// A count outside the lock, changed only while an empty `LockedValue(())` is held.
    final class Guarded: @unchecked Sendable {
        let lock = LockedValue(())
        var count = 0
    }

    /// Regression: with the value as the buffer's header, an empty value sat at the object's own
    /// address, and ThreadSanitizer took every `withLock` for a write racing with reads of the
    /// object's header ("Swift access race" in im-client, from `ReliableDelivery`'s writer lock, which
    /// made the process exit 66 in ChatChaosTests' sender-blackhole under `--sanitize=thread`). Under
    /// ThreadSanitizer this test fails the run on the old layout; everywhere it checks the exclusion.
    @Test func anEmptyValueExcludesOtherThreadsWithoutARaceReport() async {
        let guarded = Guarded()
        await runOnAThread {
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<10_000 { guarded.lock.withLock { _ in guarded.count += 1 } }
            }
        }
        #expect(guarded.count == 40_000)
    }

    /// The value's own deinitializer runs once, when the last copy of the box goes.
    @Test func theValueIsReleasedWithTheLastCopy() {
        final class Tracked: Sendable {
            let released: LockedValue<Int>
            init(_ released: LockedValue<Int>) { self.released = released }
            deinit { released.withLock { $0 += 1 } }
        }
        let released = LockedValue(0)
        do {
            let box = LockedValue(Tracked(released))
            let copy = box
            withExtendedLifetime(box) {}
            #expect(released.withLock { $0 } == 0)
            withExtendedLifetime(copy) {}
        }
        #expect(released.withLock { $0 } == 1)
    }
}
