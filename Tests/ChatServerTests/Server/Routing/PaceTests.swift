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
        var pace = Router.Pace(bucket: TokenBucket(rate: 2, burst: 3))
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
        var pace = Router.Pace(bucket: TokenBucket(rate: 1, burst: 1))
        let message = ChatMessage.v2(.broadcast(id: 1, text: "hi"))
        #expect(pace.check(message, at: 0, limits: limits) == .within)
        #expect(pace.check(message, at: 0, limits: limits) == .refused(retryAfter: 1, closes: false))
        #expect(pace.check(message, at: 0, limits: limits) == .refused(retryAfter: 1, closes: false))
        #expect(pace.check(message, at: 0, limits: limits) == .refused(retryAfter: 1, closes: true))
    }

    @Test func acknowledgementsNeverCount() {
        let limits = Self.limits(rate: 1, burst: 1, refusedInARow: 1)
        var pace = Router.Pace(bucket: TokenBucket(rate: 1, burst: 1))
        let received = ChatMessage.v2(.received(conversation: "room", upTo: 7))
        #expect((0..<5).map { _ in pace.check(received, at: 0, limits: limits) } == Array(repeating: .within, count: 5))
        #expect(pace.check(.broadcast(text: "x"), at: 0, limits: limits) == .within)
        #expect(pace.check(.broadcast(text: "x"), at: 0, limits: limits) == .refused(retryAfter: 1, closes: false))
    }
}
