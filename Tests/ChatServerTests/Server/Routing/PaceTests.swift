@testable import ChatProtocol
@testable import ChatServer
import LongLink
import Testing

/// The message-rate check of one connection, as a value: no socket, no clock but the one passed in.
@Suite struct PaceTests {
    static let second: UInt64 = 1_000_000_000

    static func limits(rate: Double, burst: Int, refusedInARow: Int) -> ChatServer.Limits {
        var limits = ChatServer.Limits()
        limits.messageRate = rate
        limits.messageBurst = burst
        limits.maxRefusedInARow = refusedInARow
        return limits
    }

    @Test func aBurstIsTakenThenRefusedUntilTheBucketHasATokenAgain() {
        let limits = Self.limits(rate: 2, burst: 3, refusedInARow: 100)
        var pace = Router.Pace()
        let message = ChatMessage.broadcast(text: "hi")
        let start = 10 * Self.second
        #expect((0..<3).map { _ in pace.check(message, at: start, limits: limits) } == [.within, .within, .within])
        // A token every 0.5 s: the wait is rounded up to whole seconds on the wire.
        #expect(pace.check(message, at: start, limits: limits) == .refused(retryAfter: 1, closes: false))
        #expect(pace.refusingUntil == start + Self.second)
        // Still refusing at 0.9 s, though the bucket has a token: nothing overtakes a refused message.
        #expect(pace.check(message, at: start + Self.second * 9 / 10, limits: limits) == .refused(retryAfter: 1, closes: false))
        #expect(pace.refusedInARow == 2)
        #expect(pace.check(message, at: start + Self.second, limits: limits) == .within)
        #expect(pace.refusedInARow == 0)
    }

    @Test func oneRefusalMoreThanTheLimitInARowCloses() {
        let limits = Self.limits(rate: 1, burst: 1, refusedInARow: 2)
        var pace = Router.Pace()
        let message = ChatMessage.v2(.broadcast(id: 1, text: "hi"))
        #expect(pace.check(message, at: 0, limits: limits) == .within)
        #expect(pace.check(message, at: 0, limits: limits) == .refused(retryAfter: 1, closes: false))
        #expect(pace.check(message, at: 0, limits: limits) == .refused(retryAfter: 1, closes: false))
        #expect(pace.check(message, at: 0, limits: limits) == .refused(retryAfter: 1, closes: true))
    }

    @Test func acknowledgementsNeverCount() {
        let limits = Self.limits(rate: 1, burst: 1, refusedInARow: 1)
        var pace = Router.Pace()
        let received = ChatMessage.v2(.received(conversation: "room", upTo: 7))
        #expect((0..<5).map { _ in pace.check(received, at: 0, limits: limits) } == Array(repeating: .within, count: 5))
        #expect(pace.check(.broadcast(text: "x"), at: 0, limits: limits) == .within)
        #expect(pace.check(.broadcast(text: "x"), at: 0, limits: limits) == .refused(retryAfter: 1, closes: false))
    }
    /// A pace keeps only its bucket's state (issue 35 §2): its decisions are those of one
    /// ``TokenBucket`` of the limits' rate and burst kept whole, message after message (a fixed series
    /// of arrivals: bursts, gaps, and the instants a token comes back).
    @Test func aPaceDecidesAsOneWholeBucketOfTheLimits() {
        let limits = Self.limits(rate: 4, burst: 3, refusedInARow: 1_000)
        var pace = Router.Pace()
        var bucket = TokenBucket(rate: 4, burst: 3)
        var refusingUntil: UInt64 = 0
        let quarter = Self.second / 4
        let arrivals: [UInt64] =
            [0, 0, 0, 0, 1, quarter - 1, quarter, quarter, 2 * quarter, 5 * Self.second, 5 * Self.second + 1]
            + (0..<12).map { 6 * Self.second + UInt64($0) * quarter / 3 }
        var verdicts: [Router.Pace.Verdict] = []
        var expected: [Router.Pace.Verdict] = []
        for now in arrivals {
            verdicts.append(pace.check(.broadcast(text: "x"), at: now, limits: limits))
            // What the pace did with a whole bucket: refused while refusing, else the bucket decides.
            if now < refusingUntil {
                expected.append(.refused(retryAfter: 1, closes: false))
            } else if case .refused = bucket.take(at: now) {
                refusingUntil = now + Self.second
                expected.append(.refused(retryAfter: 1, closes: false))
            } else {
                expected.append(.within)
            }
        }
        #expect(verdicts == expected)
        // 3 of the first burst, both at 5 s, and 4 from 6 s (the bucket full again, then one each 250 ms).
        #expect(verdicts.filter { $0 == .within }.count == 9)
        #expect(pace.arrival == bucket.theoreticalArrival)
    }
}
