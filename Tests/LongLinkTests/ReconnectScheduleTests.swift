import AsyncSocket
import LongLink
import Testing

/// A stand-in for ``ReconnectSchedule/random`` that returns `values` in turn, then repeats the last.
func fixedRandom(_ values: [Double]) -> @Sendable () -> Double {
    let remaining = LockedValue(values[...])
    return {
        remaining.withLock { rest in rest.count > 1 ? rest.removeFirst() : rest.first! }
    }
}

@Suite struct ReconnectScheduleTests {
    @Test func articleScheduleIsAtOnceThenTwoThenFourSecondsThenGiveUp() {
        var schedule = ReconnectSchedule(random: fixedRandom([0]))
        #expect(schedule.next()! == (1, .zero))
        #expect(schedule.next()! == (2, .seconds(2)))
        #expect(schedule.next()! == (3, .seconds(4)))
        #expect(schedule.next() == nil)
        #expect(schedule.next() == nil)
        #expect(schedule.attempts == 3)
    }

    @Test func defaultJitterIsUpToOneSecondAddedToEachDelay() {
        var schedule = ReconnectSchedule(random: fixedRandom([0.5, 0.25, 0.75]))
        #expect(schedule.jitter == .seconds(1))
        #expect(schedule.delays == [.zero, .seconds(2), .seconds(4)])
        #expect(schedule.next()! == (1, .milliseconds(500)))
        #expect(schedule.next()! == (2, .milliseconds(2250)))
        #expect(schedule.next()! == (3, .milliseconds(4750)))
        #expect(schedule.next() == nil)
    }

    @Test func jitterStaysBelowTheSpreadEvenWhenTheRandomSourceMisbehaves() {
        var schedule = ReconnectSchedule(
            delays: [.seconds(2), .seconds(2), .seconds(2)], jitter: .seconds(1),
            random: fixedRandom([1.0, -3, .nan]))
        #expect(schedule.next()! == (1, .seconds(3) - .nanoseconds(1)))
        #expect(schedule.next()! == (2, .seconds(2)))
        #expect(schedule.next()! == (3, .seconds(2)))
    }

    @Test func systemRandomDelaysFallWithinTheirJitterWindows() {
        var schedule = ReconnectSchedule()
        for _ in 0..<100 {
            schedule.reset()
            for base in [Duration.zero, .seconds(2), .seconds(4)] {
                let delay = schedule.next()!.delay
                #expect(delay >= base && delay < base + .seconds(1))
            }
        }
    }

    @Test func zeroJitterGivesTheExactDelaysWithoutDrawing() {
        var schedule = ReconnectSchedule(
            delays: [.milliseconds(10)], jitter: .zero,
            random: {
                Issue.record("drew"); return 0.5
            })
        #expect(schedule.next()! == (1, .milliseconds(10)))
        #expect(schedule.next() == nil)
    }

    @Test func resetAfterASuccessStartsOver() {
        var schedule = ReconnectSchedule(random: fixedRandom([0]))
        _ = schedule.next()
        _ = schedule.next()
        schedule.reset()
        #expect(schedule.attempts == 0)
        #expect(schedule.next()! == (1, .zero))
    }

    @Test func customDelaysSetTheNumberOfAttempts() {
        var schedule = ReconnectSchedule(delays: [.milliseconds(10)], random: fixedRandom([0]))
        #expect(schedule.maxAttempts == 1)
        #expect(schedule.next()! == (1, .milliseconds(10)))
        #expect(schedule.next() == nil)
        var none = ReconnectSchedule(delays: [])
        #expect(none.next() == nil)
    }

    @Test func exponentialGrowsByTheFactorUpToTheCap() {
        var schedule = ReconnectSchedule.exponential(
            base: .seconds(1), factor: 2, cap: .seconds(30), attempts: 7,
            jitter: .zero)
        #expect(schedule.delays == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        for (index, seconds) in [1, 2, 4, 8, 16, 30, 30].enumerated() {
            #expect(schedule.next()! == (index + 1, .seconds(seconds)))
        }
        #expect(schedule.next() == nil)
    }

    @Test func exponentialWithFractionalFactorAndJitter() {
        var schedule = ReconnectSchedule.exponential(
            base: .milliseconds(100), factor: 1.5, cap: .seconds(1), attempts: 4,
            jitter: .milliseconds(100), random: fixedRandom([0, 0.5, 0.1, 0.9]))
        #expect(schedule.next()! == (1, .milliseconds(100)))
        #expect(schedule.next()! == (2, .milliseconds(200)))  // 150 + 50
        #expect(schedule.next()! == (3, .milliseconds(235)))  // 225 + 10
        #expect(schedule.next()! == (4, .microseconds(427_500)))  // 337.5 + 90
        #expect(schedule.next() == nil)
    }

    @Test func exponentialCapIsReachedWithoutOverflowForManyAttempts() {
        let schedule = ReconnectSchedule.exponential(base: .seconds(1), factor: 10, cap: .seconds(60), attempts: 1000, jitter: .zero)
        #expect(schedule.baseDelay(ofAttempt: 2) == .seconds(10))
        #expect(schedule.baseDelay(ofAttempt: 3) == .seconds(60))
        #expect(schedule.baseDelay(ofAttempt: 1000) == .seconds(60))
        #expect(schedule.baseDelay(ofAttempt: 1001) == nil)
        #expect(schedule.baseDelay(ofAttempt: 0) == nil)
    }

    @Test func configurationReconnectDelaysReplaceTheGrowthAndKeepTheJitter() {
        var configuration = LongLinkClient<TextCodec>.Configuration(host: "127.0.0.1", port: 1)
        #expect(configuration.reconnectDelays == [.zero, .seconds(2), .seconds(4)])
        #expect(configuration.reconnectSchedule.jitter == .seconds(1))
        #expect(configuration.linkHealthyAfter == nil)
        configuration.reconnectSchedule = .exponential(base: .seconds(1), cap: .seconds(8), attempts: 5, jitter: .seconds(3))
        #expect(configuration.reconnectDelays == [1, 2, 4, 8, 8].map { Duration.seconds($0) })
        configuration.reconnectDelays = [.seconds(5)]
        #expect(configuration.reconnectSchedule.growth == .fixed([.seconds(5)]))
        #expect(configuration.reconnectSchedule.jitter == .seconds(3))
    }
}

@Suite struct ReconnectPolicyTests {
    @Test func keepTryingDoublesFromTheLastDelayUpToTheCap() {
        var schedule = ReconnectSchedule(jitter: .zero)
        schedule.policy = .keepTrying()
        var delays: [Duration] = []
        var exhaustedBefore: [Bool] = []
        for _ in 0..<9 {
            exhaustedBefore.append(schedule.shouldReportUnavailable)
            delays.append(schedule.next()!.delay)
        }
        #expect(delays == [0, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(exhaustedBefore == [false, false, false, true, false, false, false, false, false])
        #expect(schedule.attempts == 9)
        #expect(ReconnectPolicy.defaultCap == .seconds(60))
    }

    @Test func keepTryingAddsTheJitterToEveryDelay() {
        var schedule = ReconnectSchedule(random: fixedRandom([0.5, 0.5, 0.5, 0.25, 0.999]))
        schedule.policy = .keepTrying(cap: .seconds(10))
        #expect(schedule.next()! == (1, .milliseconds(500)))
        #expect(schedule.next()! == (2, .milliseconds(2500)))
        #expect(schedule.next()! == (3, .milliseconds(4500)))
        #expect(schedule.next()! == (4, .milliseconds(8250)))
        #expect(schedule.next()! == (5, .milliseconds(10_999)))
        #expect(schedule.baseDelay(ofAttempt: 1_000_000) == .seconds(10))
    }

    @Test func keepTryingAfterShortDelaysStartsDoublingFromOneSecond() {
        var schedule = ReconnectSchedule(delays: [.zero], jitter: .zero)
        schedule.policy = .keepTrying(cap: .seconds(5))
        #expect((1...5).map { schedule.baseDelay(ofAttempt: $0) } == [0, 2, 4, 5, 5].map { Duration.seconds($0) })
        var none = ReconnectSchedule(delays: [], jitter: .zero)
        none.policy = .keepTrying()
        #expect(none.shouldReportUnavailable)
        #expect(none.next()! == (1, .seconds(2)))
    }

    @Test func giveUpIsTheDefaultAndStopsAfterTheGrowth() {
        var schedule = ReconnectSchedule(random: fixedRandom([0]))
        #expect(schedule.policy == .giveUp)
        for _ in 0..<3 { _ = schedule.next() }
        #expect(schedule.shouldReportUnavailable)
        #expect(schedule.next() == nil)
        #expect(schedule.shouldReportUnavailable)
        #expect(schedule.baseDelay(ofAttempt: 4) == nil)
    }

    @Test func configurationLeavesThePolicyToTheKindOfLink() {
        var configuration = LongLinkClient<TextCodec>.Configuration(host: "127.0.0.1", port: 1)
        #expect(configuration.reconnectPolicy == nil)
        #expect(configuration.outboxLimit == 10_000)
        #expect(configuration.unacknowledgedWindow == 256)
        configuration.reconnectPolicy = .keepTrying(cap: .seconds(30))
        #expect(configuration.reconnectPolicy == .keepTrying(cap: .seconds(30)))
    }
}
