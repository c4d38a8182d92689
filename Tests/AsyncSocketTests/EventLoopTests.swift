import AsyncSocket
import Testing
import TestSupport

@Suite struct EventLoopTests {
    @Test func tasksRunInSubmissionOrderOnTheLoopThread() async throws {
        let loop = EventLoopGroup.shared.next()
        let recorder = EventRecorder<Int>()
        for index in 0..<100 {
            loop.execute {
                precondition(loop.inEventLoop)
                recorder.record(index)
            }
        }
        #expect(try await recorder.next(100) == Array(0..<100))
        #expect(!loop.inEventLoop)
    }

    @Test func runAndWaitReturnsTheLoopsResultAfterTheTasksBeforeIt() {
        let group = EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let loop = group.next()
        let order = LockedValue<[String]>([])
        loop.execute { order.withLock { $0.append("task") } }
        let answer = loop.runAndWait { () -> Int in
            order.withLock { $0.append("body on loop: \(loop.inEventLoop)") }
            // Inline on the loop thread: no deadlock.
            return loop.runAndWait { 41 } + 1
        }
        #expect(answer == 42)
        #expect(order.withLock { $0 } == ["task", "body on loop: true"])
    }

    @Test func timersFireInVirtualTimeOnlyWhenTheirDeadlineIsReached() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock)
        defer { group.shutdown() }
        let loop = group.next()
        let recorder = EventRecorder<String>()
        loop.scheduleTask(in: .milliseconds(50)) { recorder.record("50 ms") }
        loop.scheduleTask(in: .milliseconds(20)) { recorder.record("20 ms") }
        let cancelled = loop.scheduleTask(in: .milliseconds(30)) { recorder.record("cancelled") }
        cancelled.cancel()
        await clock.advance(by: .milliseconds(19))
        #expect(recorder.all == [])
        await clock.advance(by: .milliseconds(1))
        #expect(recorder.all == ["20 ms"])
        await clock.advance(by: .milliseconds(29))
        #expect(recorder.all == ["20 ms"])
        await clock.advance(by: .milliseconds(1))
        #expect(recorder.all == ["20 ms", "50 ms"])
    }

    @Test func groupHandsOutItsLoopsInTurn() {
        let group = EventLoopGroup(numberOfThreads: 3)
        defer { group.shutdown() }
        let handedOut = (0..<6).map { _ in group.next() }
        #expect(handedOut.map { ObjectIdentifier($0) } == (group.loops + group.loops).map { ObjectIdentifier($0) })
    }
}
