import LongLink
import Testing

@Suite struct ReconnectScheduleTests {
    @Test func articleScheduleIsAtOnceThenTwoThenFourSecondsThenGiveUp() {
        var schedule = ReconnectSchedule()
        #expect(schedule.next()! == (1, .zero))
        #expect(schedule.next()! == (2, .seconds(2)))
        #expect(schedule.next()! == (3, .seconds(4)))
        #expect(schedule.next() == nil)
        #expect(schedule.next() == nil)
        #expect(schedule.attempts == 3)
    }

    @Test func resetAfterASuccessStartsOver() {
        var schedule = ReconnectSchedule()
        _ = schedule.next()
        _ = schedule.next()
        schedule.reset()
        #expect(schedule.attempts == 0)
        #expect(schedule.next()! == (1, .zero))
    }

    @Test func customDelaysSetTheNumberOfAttempts() {
        var schedule = ReconnectSchedule(delays: [.milliseconds(10)])
        #expect(schedule.next()! == (1, .milliseconds(10)))
        #expect(schedule.next() == nil)
        var none = ReconnectSchedule(delays: [])
        #expect(none.next() == nil)
    }
}
