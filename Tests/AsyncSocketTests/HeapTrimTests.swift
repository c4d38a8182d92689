import AsyncSocket
import Dispatch
import Testing
import TestSupport

/// ``HeapTrimPolicy``'s decisions tick by tick in virtual time, ``HeapTrimmer``'s wiring on its real
/// timer, and ``ResourceLimits/releaseFreeHeapMemory()`` on a heap with free pages (issue 35 §2).
@Suite struct HeapTrimTests {
    /// The ticks' decisions, one per second, for `counts` (the activity at seconds 1, 2, ...).
    static func decisions(_ policy: HeapTrimPolicy, _ counts: [UInt64]) -> [Bool] {
        var policy = policy
        return counts.enumerated().map { second, count in policy.tick(activity: count, now: .seconds(second + 1)) }
    }

    /// A burst trims once, at its count's first tick `quietPeriod` after its last change; not before,
    /// and not again while nothing happens.
    @Test func aBurstTrimsOnceAfterItsQuietPeriod() {
        let policy = HeapTrimPolicy(minimumActivity: 1_000, quietPeriod: .seconds(2), longestDelay: .seconds(30))
        // Changed at 1, 2, 3 s; unchanged at 4 s (1 s quiet), 5 s (2 s quiet: trim), then idle.
        #expect(Self.decisions(policy, [400, 900, 1_500, 1_500, 1_500, 1_500, 1_500]) == [false, false, false, false, true, false, false])
    }

    /// Less than `minimumActivity` since the last trim never trims, however quiet; the count since the
    /// last trim, not since the start, is what counts.
    @Test func tooLittleActivityDoesNotTrim() {
        let policy = HeapTrimPolicy(minimumActivity: 1_000, quietPeriod: .seconds(2), longestDelay: .seconds(30))
        #expect(Self.decisions(policy, [999, 999, 999, 999]) == [false, false, false, false])
        // 1,000 at 1 s: trim at 3 s; then 1,999 (999 more) never; 2,000 at 7 s: trim at 9 s.
        #expect(
            Self.decisions(policy, [1_000, 1_000, 1_000, 1_999, 1_999, 1_999, 2_000, 2_000, 2_000, 2_000])
                == [false, false, true, false, false, false, false, false, true, false])
    }

    /// Activity that never pauses trims every `longestDelay` from the last trim (the first from the
    /// start), not at every tick.
    @Test func activityWithoutPauseTrimsEveryLongestDelay() {
        let policy = HeapTrimPolicy(minimumActivity: 1_000, quietPeriod: .seconds(2), longestDelay: .seconds(5))
        let counts = (1...12).map { UInt64($0) * 1_000 }
        // Seconds 5 and 10.
        #expect(Self.decisions(policy, counts) == (1...12).map { $0 == 5 || $0 == 10 })
    }

    /// Regression: a burst trimmed on the way (after `longestDelay`) is trimmed again at its end, even
    /// with fewer than `minimumActivity` after that trim: the first policy counted from any trim, so the
    /// tail of a 19,000-login burst that outlasted 30 s kept its freed pages (RSS 82 MB, not 75 MB).
    @Test func aLongBurstIsTrimmedAgainAtItsEnd() {
        let policy = HeapTrimPolicy(minimumActivity: 1_000, quietPeriod: .seconds(2), longestDelay: .seconds(5))
        // 1,000 a second for 5 s (trim at 5 s), 500 more at 6 s, then quiet (trim at 8 s), then idle.
        let counts: [UInt64] = [1_000, 2_000, 3_000, 4_000, 5_000, 5_500, 5_500, 5_500, 5_500, 5_500]
        #expect(Self.decisions(policy, counts) == [false, false, false, false, true, false, false, true, false, false])
        // A burst below the minimum after a quiet trim is not trimmed, even though it follows one.
        #expect(
            Self.decisions(policy, [1_000, 1_000, 1_000, 1_500, 1_500, 1_500, 1_500])
                == [false, false, true, false, false, false, false])
    }

    /// The background count (heartbeats) alone trims every `longestDelay` once 1,000 came since the last
    /// trim, and never at a quiet `activity`; a burst still trims at its end while the background goes on.
    @Test func theBackgroundTrimsEveryLongestDelayAndDoesNotDelayABurst() {
        let policy = HeapTrimPolicy(minimumActivity: 1_000, quietPeriod: .seconds(2), longestDelay: .seconds(10))
        // 100 heartbeats a second, no sessions: 1,000 by 10 s, trim at 10 s and 20 s.
        var idle = policy
        let idleDecisions = (1...25).map { idle.tick(activity: 0, background: UInt64($0) * 100, now: .seconds($0)) }
        #expect(idleDecisions == (1...25).map { $0 == 10 || $0 == 20 })
        // 50 a second: 1,000 only by 20 s.
        var slow = policy
        let slowDecisions = (1...25).map { slow.tick(activity: 0, background: UInt64($0) * 50, now: .seconds($0)) }
        #expect(slowDecisions == (1...25).map { $0 == 20 })
        // A burst of 1,000 at 1 s with 100 heartbeats a second: trim at 3 s (its end), then 13 s, 23 s.
        var busy = policy
        let busyDecisions = (1...25).map { busy.tick(activity: 1_000, background: UInt64($0) * 100, now: .seconds($0)) }
        #expect(busyDecisions == (1...25).map { $0 == 3 || $0 == 13 || $0 == 23 })
    }

    /// What happened before the policy started does not count; a count that wraps around counts the
    /// difference.
    @Test func theStartingCountAndWrapAround() {
        let started = HeapTrimPolicy(minimumActivity: 10, quietPeriod: .seconds(1), longestDelay: .seconds(60), activity: 5_000)
        #expect(Self.decisions(started, [5_009, 5_009, 5_010, 5_010]) == [false, false, false, true])
        let nearTheTop = HeapTrimPolicy(
            minimumActivity: 10, quietPeriod: .seconds(1), longestDelay: .seconds(60), activity: UInt64.max - 4)
        // max - 4 → 5 is 10 more.
        #expect(Self.decisions(nearTheTop, [5, 5]) == [false, true])
    }

    /// The timer reads the count, trims when the policy says so, and reports it, on its own queue; it
    /// does not trim again while the count stays the same. (The real timer at 1 ms ticks: what is
    /// waited for is the trim, with a bound only a hang reaches.)
    @Test func theTrimmerTrimsAfterActivityAndReportsIt() {
        let count = LockedValue<UInt64>(7)
        let heartbeats = LockedValue<UInt64>(500)
        let trims = LockedValue(0)
        let reported = DispatchSemaphore(value: 0)
        let reports = LockedValue<[Bool]>([])
        let trimmer = HeapTrimmer(
            policy: HeapTrimPolicy(minimumActivity: 3, quietPeriod: .zero, longestDelay: .seconds(3_600)),
            interval: .milliseconds(1),
            activity: { count.withLock { $0 } },
            background: { heartbeats.withLock { $0 } },
            trim: {
                trims.withLock { $0 += 1 }
                return true
            },
            trimmed: { released, _ in
                reports.withLock { $0.append(released) }
                reported.signal()
            })
        trimmer.start()
        // 7 was the count at the start: 2 more is not enough, 3 more is.
        count.withLock { $0 = 9 }
        count.withLock { $0 = 10 }
        #expect(reported.wait(timeout: .now() + .seconds(10 * TestTiming.slowdown)) == .success)
        trimmer.stop()
        #expect(trims.withLock { $0 } == 1)
        #expect(reports.withLock { $0 } == [true])
    }

    /// With 8 MiB of 1 KiB blocks freed below one still in use (so free(3) cannot trim the heap's top),
    /// the free pages are released.
    @Test func freePagesInsideTheHeapAreReleased() {
        #if canImport(Glibc)
            let blocks = (0..<8_192).map { _ in UnsafeMutableRawPointer.allocate(byteCount: 1_024, alignment: 16) }
            let last = UnsafeMutableRawPointer.allocate(byteCount: 1_024, alignment: 16)
            for block in blocks { block.deallocate() }
            #expect(ResourceLimits.releaseFreeHeapMemory())
            last.deallocate()
        #endif
    }
}
