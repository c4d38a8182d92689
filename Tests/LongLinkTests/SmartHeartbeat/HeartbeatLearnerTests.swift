import Foundation
@testable import LongLink
import Testing

/// Mars's adaptive computation on its own: heartbeats against a NAT that forgets after `nat`, each
/// answered when sent after less idle time than that.
@Suite struct HeartbeatLearnerTests {
    /// The interval changes of `beats` heartbeats, as "from→to reason" in seconds.
    func changes(_ learner: inout HeartbeatLearner, nat: Duration, beats: Int) -> [String] {
        var changes: [String] = []
        for _ in 0..<beats {
            let interval = learner.interval
            let change = interval < nat ? learner.succeeded(at: interval) : learner.failed(at: interval)
            if let change { changes.append("\(change.from.components.seconds)→\(learner.interval.components.seconds) \(change.reason)") }
        }
        return changes
    }

    @Test func probesUpInStepsAndSettlesAMarginBelowTheLastIntervalThatWorked() {
        var learner = HeartbeatLearner(policy: SmartHeartbeat(), learned: nil)
        #expect(learner.interval == .seconds(210))
        #expect(
            changes(&learner, nat: .seconds(300), beats: 20) == [
                "210→270 stepped up", "270→330 stepped up", "330→250 backed off"
            ])
        #expect(learner.learned.isSettled)
        #expect(learner.learned.failures == 0)
    }

    @Test func aNATThatNeverForgetsSettlesAMarginBelowTheMaximum() {
        var learner = HeartbeatLearner(policy: SmartHeartbeat(), learned: nil)
        let seen = changes(&learner, nat: .seconds(100_000), beats: 50)
        #expect(
            seen == [
                "210→270 stepped up", "270→330 stepped up", "330→390 stepped up", "390→450 stepped up",
                "450→510 stepped up", "510→570 stepped up", "570→600 stepped up", "600→580 settled at the maximum"
            ])
    }

    @Test func oneFailureIsNotEnoughAndAnAnswerForgivesIt() {
        var learner = HeartbeatLearner(policy: SmartHeartbeat(), learned: LearnedHeartbeat(interval: .seconds(330)))
        #expect(learner.failed(at: .seconds(330)) == nil)
        #expect(learner.learned.failures == 1)
        #expect(learner.succeeded(at: .seconds(330)) == nil)
        #expect(learner.learned.failures == 0)
        #expect(learner.failed(at: .seconds(330)) == nil)
        #expect(learner.failed(at: .seconds(330))?.reason == .backedOff)
        #expect(learner.interval == .seconds(250))
    }

    @Test func aSettledIntervalThatFailsTwiceStartsOverFromTheMinimum() {
        var learner = HeartbeatLearner(policy: SmartHeartbeat(), learned: LearnedHeartbeat(interval: .seconds(250), isSettled: true))
        #expect(
            changes(&learner, nat: .seconds(240), beats: 20) == [
                "250→210 probing again", "210→270 stepped up", "270→210 backed off"
            ])
        #expect(learner.learned == LearnedHeartbeat(interval: .seconds(210), isSettled: true, modified: learner.learned.modified))
    }

    @Test func failuresAtTheMinimumTeachNothing() {
        var learner = HeartbeatLearner(policy: SmartHeartbeat(), learned: nil)
        #expect(changes(&learner, nat: .seconds(100), beats: 10) == [])
        #expect(learner.interval == .seconds(210))
        #expect(learner.learned.failures == 0)
    }

    @Test func anOutcomeForAnotherIntervalThanTheCurrentOneIsIgnored() {
        var learner = HeartbeatLearner(policy: SmartHeartbeat(), learned: LearnedHeartbeat(interval: .seconds(270)))
        #expect(learner.failed(at: .seconds(330)) == nil)
        #expect(learner.succeeded(at: .seconds(210)) == nil)
        #expect(learner.learned.failures == 0 && learner.learned.successes == 0)
    }

    @Test func storedIntervalsOutsideTheBoundsAreClampedIn() {
        let low = HeartbeatLearner(policy: SmartHeartbeat(), learned: LearnedHeartbeat(interval: .seconds(30)))
        #expect(low.interval == .seconds(210))
        let high = HeartbeatLearner(policy: SmartHeartbeat(), learned: LearnedHeartbeat(interval: .seconds(3600)))
        #expect(high.interval == .seconds(580))
    }
}
