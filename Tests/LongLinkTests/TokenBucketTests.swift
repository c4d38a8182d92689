import LongLink
import Testing

/// ``TokenBucket`` in virtual time: every decision at a given nanosecond.
@Suite struct TokenBucketTests {
    static let start: UInt64 = 1_000_000_000
    static func at(_ milliseconds: UInt64) -> UInt64 { start + milliseconds * 1_000_000 }

    @Test func aBurstGoesAtOnceThenOneEveryIntervalToTheNanosecond() {
        var bucket = TokenBucket(rate: 2, burst: 3)
        for _ in 0..<3 { #expect(bucket.take(at: Self.at(0)) == .allowed) }
        #expect(bucket.take(at: Self.at(0)) == .refused(retryAfter: .milliseconds(500)))
        #expect(bucket.take(at: Self.at(499)) == .refused(retryAfter: .milliseconds(1)))
        #expect(bucket.take(at: Self.at(500) - 1) == .refused(retryAfter: .nanoseconds(1)))
        #expect(bucket.take(at: Self.at(500)) == .allowed)
        #expect(bucket.take(at: Self.at(500)) == .refused(retryAfter: .milliseconds(500)))
        #expect(bucket.take(at: Self.at(1_000)) == .allowed)
    }

    @Test func refusalsTakeNothingSoWaitingTheRetryIsEnough() {
        var bucket = TokenBucket(rate: 1, burst: 1)
        #expect(bucket.take(at: Self.at(0)) == .allowed)
        for _ in 0..<1_000 { #expect(bucket.take(at: Self.at(10)) == .refused(retryAfter: .milliseconds(990))) }
        #expect(bucket.take(at: Self.at(1_000)) == .allowed)
    }

    @Test func aQuietSpellRefillsTheBurstAndNoMore() {
        var bucket = TokenBucket(rate: 10, burst: 5)
        for _ in 0..<5 { #expect(bucket.take(at: Self.at(0)) == .allowed) }
        #expect(bucket.take(at: Self.at(0)) == .refused(retryAfter: .milliseconds(100)))
        // An hour later: five at once again, not 36,000.
        let later: UInt64 = 3_600_000
        for _ in 0..<5 { #expect(bucket.take(at: Self.at(later)) == .allowed) }
        #expect(bucket.take(at: Self.at(later)) == .refused(retryAfter: .milliseconds(100)))
    }

    @Test func aSteadySenderAtTheRateIsNeverRefused() {
        var bucket = TokenBucket(rate: 20, burst: 1)
        for step: UInt64 in 0..<1_000 { #expect(bucket.take(at: Self.at(step * 50)) == .allowed) }
        #expect(bucket.take(at: Self.at(999 * 50 + 49)) == .refused(retryAfter: .milliseconds(1)))
    }

    @Test func fractionalRates() {
        var bucket = TokenBucket(rate: 0.5, burst: 2)
        #expect(bucket.take(at: Self.at(0)) == .allowed)
        #expect(bucket.take(at: Self.at(0)) == .allowed)
        #expect(bucket.take(at: Self.at(0)) == .refused(retryAfter: .seconds(2)))
        #expect(bucket.take(at: Self.at(2_000)) == .allowed)
        #expect(bucket.rate == 0.5 && bucket.burst == 2)
    }

    /// The issue's flood: 111,899 broadcasts in 5 s from one client, evenly spread. With the chat's
    /// defaults (20 a second, bursts of 300): the 300 of the burst, then one per 50 ms until the last
    /// one, 4.99996 s after the first: 300 + 99 = 399 go through.
    @Test func theIssuesFloodIsCutToTheBurstAndTheRate() {
        var bucket = TokenBucket(rate: 20, burst: 300)
        var allowed = 0
        let count: UInt64 = 111_899
        for index: UInt64 in 0..<count where bucket.take(at: Self.start + index * 5_000_000_000 / count) == .allowed {
            allowed += 1
        }
        let last = (count - 1) * 5_000_000_000 / count
        #expect(last / 50_000_000 == 99)
        #expect(allowed == 300 + 99)
    }
}
