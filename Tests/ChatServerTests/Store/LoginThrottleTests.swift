@testable import ChatServer
import Testing

/// Failed-login throttling in virtual time: the instants are made by hand from one origin.
@Suite struct LoginThrottleTests {
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64((seconds * 1000).rounded())) }

    @Test func fiveFailuresForANameWithinTheWindowLockItFor30Seconds() {
        var throttle = LoginThrottle()
        for attempt in 0..<4 {
            #expect(throttle.recordFailure(name: "ann", address: "10.0.0.\(attempt)", now: at(Double(attempt))) == .allowed)
        }
        #expect(throttle.recordFailure(name: "ann", address: "10.0.0.4", now: at(4)) == .refused(retryAfter: .seconds(30), subject: .name))
        #expect(throttle.check(name: "ann", address: "10.0.0.9", now: at(33.999)) == .refused(retryAfter: .milliseconds(1), subject: .name))
        #expect(throttle.check(name: "bob", address: "10.0.0.4", now: at(5)) == .allowed)
        #expect(throttle.check(name: "ann", address: "10.0.0.9", now: at(34)) == .allowed)
    }

    @Test func fiveFailuresFromAnAddressLockItForEveryName() {
        var throttle = LoginThrottle()
        for attempt in 0..<4 {
            #expect(throttle.recordFailure(name: "user\(attempt)", address: "10.0.0.1", now: at(0)) == .allowed)
        }
        #expect(
            throttle.recordFailure(name: "user4", address: "10.0.0.1", now: at(0)) == .refused(retryAfter: .seconds(30), subject: .address))
        #expect(throttle.check(name: "zoe", address: "10.0.0.1", now: at(10)) == .refused(retryAfter: .seconds(20), subject: .address))
        #expect(throttle.check(name: "zoe", address: "10.0.0.2", now: at(10)) == .allowed)
    }

    @Test func eachLockoutDoublesUpTo15Minutes() {
        var throttle = LoginThrottle()
        var now = 0.0
        for lockout in [30, 60, 120, 240, 480, 900, 900] {
            for _ in 0..<4 { #expect(throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(now)) == .allowed) }
            #expect(
                throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(now))
                    == .refused(retryAfter: .seconds(lockout), subject: .name))
            now += Double(lockout)
        }
    }

    @Test func failuresOlderThan15MinutesNoLongerCount() {
        var throttle = LoginThrottle()
        for _ in 0..<4 {
            throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(0))
            throttle.recordFailure(name: "bob", address: "10.0.0.2", now: at(0))
        }
        #expect(throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(900)) == .allowed)
        #expect(
            throttle.recordFailure(name: "bob", address: "10.0.0.2", now: at(899.999)) == .refused(retryAfter: .seconds(30), subject: .name)
        )
        for _ in 0..<3 { #expect(throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(900)) == .allowed) }
        #expect(
            throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(900)) == .refused(retryAfter: .seconds(30), subject: .name))
    }

    @Test func lockoutsStartAgainFrom30SecondsAfterAnHourWithoutAFailure() {
        var throttle = LoginThrottle()
        for (name, address) in [("ann", "10.0.0.1"), ("bob", "10.0.0.2")] {
            for _ in 0..<5 { throttle.recordFailure(name: name, address: address, now: at(0)) }
            for _ in 0..<5 { throttle.recordFailure(name: name, address: address, now: at(30)) }
            #expect(throttle.check(name: name, address: address, now: at(30)) == .refused(retryAfter: .seconds(60), subject: .name))
        }
        // The last failures were at 30 s.
        for _ in 0..<5 { throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(3_630)) }
        for _ in 0..<5 { throttle.recordFailure(name: "bob", address: "10.0.0.2", now: at(3_629.999)) }
        #expect(throttle.check(name: "ann", address: "10.0.0.1", now: at(3_630)) == .refused(retryAfter: .seconds(30), subject: .name))
        #expect(throttle.check(name: "bob", address: "10.0.0.2", now: at(3_629.999)) == .refused(retryAfter: .seconds(120), subject: .name))
    }

    @Test func failuresWhileLockedAreNotCounted() {
        var throttle = LoginThrottle()
        for _ in 0..<5 { throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(0)) }
        for _ in 0..<5 { throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(10)) }
        #expect(throttle.check(name: "ann", address: "10.0.0.1", now: at(10)) == .refused(retryAfter: .seconds(20), subject: .name))
        for _ in 0..<4 { #expect(throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(30)) == .allowed) }
    }

    @Test func aSuccessClearsTheNameButNotTheAddress() {
        var throttle = LoginThrottle()
        for _ in 0..<4 { throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(0)) }
        throttle.recordSuccess(name: "ann")
        #expect(throttle.recordFailure(name: "ann", address: "10.0.0.2", now: at(1)) == .allowed)
        #expect(
            throttle.recordFailure(name: "bob", address: "10.0.0.1", now: at(1)) == .refused(retryAfter: .seconds(30), subject: .address))
    }

    @Test func whenBothAreLockedTheLongerLockoutIsReported() {
        var throttle = LoginThrottle()
        for _ in 0..<5 { throttle.recordFailure(name: "ann", address: "10.0.0.1", now: at(0)) }  // both until 30 s
        for index in 0..<5 { throttle.recordFailure(name: "user\(index)", address: "10.0.0.2", now: at(10)) }  // until 40 s
        #expect(throttle.check(name: "ann", address: "10.0.0.2", now: at(10)) == .refused(retryAfter: .seconds(30), subject: .address))
        #expect(throttle.check(name: "ann", address: "10.0.0.1", now: at(10)) == .refused(retryAfter: .seconds(20), subject: .name))
        #expect(throttle.check(name: "ann", address: "10.0.0.2", now: at(35)) == .refused(retryAfter: .seconds(5), subject: .address))
    }

    @Test func recordsThatNoLongerMatterArePruned() {
        var throttle = LoginThrottle()
        for attempt in 0..<5 { throttle.recordFailure(name: "ann", address: "10.0.0.\(attempt)", now: at(Double(attempt))) }
        #expect(throttle.recordCount == 6)
        throttle.prune(now: at(903.999))
        #expect(throttle.recordCount == 2)  // the failure from 10.0.0.4, at 4 s, is not yet 15 minutes old
        throttle.prune(now: at(904))
        #expect(throttle.recordCount == 1)  // ann's lockout is remembered for an hour
        throttle.prune(now: at(3_603.999))
        #expect(throttle.recordCount == 1)
        throttle.prune(now: at(3_604))
        #expect(throttle.recordCount == 0)
    }

    @Test func manyAddressesAreSweptAutomatically() {
        var throttle = LoginThrottle()
        for index in 0..<2_000 { throttle.recordFailure(name: "ann", address: "a\(index)", now: at(Double(index))) }
        // Above 1,024 records (ann and 1,024 addresses, at 1,023 s) a sweep keeps ann and the 900 addresses
        // of the last 15 minutes and waits for twice that (1,802); reached at 1,925 s, it keeps 901 again;
        // then 74 more addresses.
        #expect(throttle.recordCount == 901 + 74)
    }
}
