import Foundation
@testable import ChatServer
import Testing

/// ``RepeatLog`` in virtual time.
@Suite struct RepeatLogTests {
    static let second: UInt64 = 1_000_000_000

    @Test func theFirstIsLoggedTheRepeatsAreSummedOnceTheIntervalHasPassed() {
        var log = RepeatLog(interval: .seconds(60))
        let key = RepeatLog.Key(source: "10.0.0.1", kind: "refused")
        #expect(log.note("refused 10.0.0.1", key: key, now: 0) == "refused 10.0.0.1")
        for step: UInt64 in 1...500 { #expect(log.note("refused 10.0.0.1", key: key, now: step * Self.second / 10) == nil) }
        #expect(log.summaries(now: 59 * Self.second) == [])
        #expect(log.summaries(now: 60 * Self.second) == ["refused 10.0.0.1 (and 500 more like it in 60 s)"])
        #expect(log.isEmpty)
        // The next one starts a new window and is logged.
        #expect(log.note("refused 10.0.0.1", key: key, now: 61 * Self.second) == "refused 10.0.0.1")
        // A window without repeats ends without a line.
        #expect(log.summaries(now: 200 * Self.second) == [])
    }

    @Test func sourcesAndKindsAreCountedApartAndClosingASourceSumsItUp() {
        var log = RepeatLog(interval: .seconds(60))
        let ann = RepeatLog.Key(source: "session 1", kind: "rate")
        let bob = RepeatLog.Key(source: "session 2", kind: "rate")
        let annOther = RepeatLog.Key(source: "session 1", kind: "other")
        #expect(log.note("ann", key: ann, now: 0) == "ann")
        #expect(log.note("bob", key: bob, now: 0) == "bob")
        #expect(log.note("ann other", key: annOther, now: Self.second) == "ann other")
        #expect(log.note("ann", key: ann, now: 2 * Self.second) == nil)
        #expect(log.note("ann other", key: annOther, now: 3 * Self.second) == nil)
        #expect(
            log.close(source: "session 1", now: 5 * Self.second)
                == ["ann (and 1 more like it in 5 s)", "ann other (and 1 more like it in 4 s)"])
        #expect(log.close(source: "session 2", now: 5 * Self.second) == [])
        #expect(log.isEmpty)
    }

    @Test func beyondMaxSourcesEventsAreCountedTogether() {
        var log = RepeatLog(interval: .seconds(10), maxSources: 2)
        #expect(log.note("a", key: .init(source: "a", kind: "k"), now: 0) == "a")
        #expect(log.note("b", key: .init(source: "b", kind: "k"), now: 0) == "b")
        for source in ["c", "d", "e"] { #expect(log.note(source, key: .init(source: source, kind: "k"), now: Self.second) == nil) }
        #expect(log.summaries(now: 11 * Self.second) == ["3 more events from other sources in 10 s"])
    }
}
