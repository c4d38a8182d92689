@testable import AsyncSocket
import Testing

/// The locked state the async bridges share (``AsyncBridgeLock``), without a socket: elements offered
/// by hand, `next()` calls in tasks, the socket's end simulated.
@Suite struct AsyncBridgeLockTests {
    struct NoFields {}
    typealias Lock = AsyncBridgeLock<Int, NoFields>

    /// Offers `elements` and returns what the lock did with each.
    private func offer(_ elements: [Int], to lock: Lock, bufferLimit: Int = .max) -> [Lock.Offer] {
        lock.locked { state, effects in elements.map { state.offer($0, bufferLimit: bufferLimit, &effects) } }
    }

    /// Yields until `count` `next()` calls wait (no clock: the tasks only need to run).
    private func waitForWaiters(_ count: Int, in lock: Lock) async {
        while lock.withLock({ $0.waitingCount }) < count { await Task.yield() }
    }

    @Test func bufferedElementsComeOutOldestFirst() async {
        let lock = Lock(NoFields())
        #expect(offer([1, 2, 3], to: lock) == [.buffered(count: 1), .buffered(count: 2), .buffered(count: 3)])
        #expect(lock.withLock { $0.bufferedCount } == 3)
        var taken: [Result<Int?, SocketError>] = []
        for _ in 0..<3 { taken.append(await lock.next()) }
        #expect(taken == [.success(1), .success(2), .success(3)])
        #expect(lock.withLock { $0.bufferedCount } == 0)
        #expect(lock.withLock { $0.waitingCount } == 0)
    }

    @Test func theBufferLimitRefusesElements() {
        let lock = Lock(NoFields())
        #expect(offer([1, 2, 3], to: lock, bufferLimit: 2) == [.buffered(count: 1), .buffered(count: 2), .refused])
        #expect(lock.withLock { $0.bufferedCount } == 2)
    }

    @Test func aWaitingNextGetsTheNextElementOffered() async {
        let lock = Lock(NoFields())
        let waiting = Task { await lock.next() }
        await waitForWaiters(1, in: lock)
        #expect(offer([7, 8], to: lock) == [.handed, .buffered(count: 1)])
        #expect(await waiting.value == .success(7))
        #expect(lock.withLock { $0.waitingCount } == 0)
        #expect(await lock.next() == .success(8))
    }

    @Test func waitingCallsAreServedInTheOrderTheyWaited() async {
        let lock = Lock(NoFields())
        let first = Task { await lock.next() }
        await waitForWaiters(1, in: lock)
        let second = Task { await lock.next() }
        await waitForWaiters(2, in: lock)
        #expect(offer([1, 2], to: lock) == [.handed, .handed])
        #expect(await first.value == .success(1))
        #expect(await second.value == .success(2))
    }

    @Test func whenTakenRunsAfterABufferedElementIsTaken() async {
        let lock = Lock(NoFields())
        _ = offer([5], to: lock)
        let counts = LockedValue<[Int]>([])
        let element = await lock.next { state, _ in
            let left = state.bufferedCount
            counts.withLock { $0.append(left) }
        }
        #expect(element == .success(5))
        #expect(counts.withLock { $0 } == [0])
    }

    @Test func finishingKeepsTheBufferedForNextThenThrowsTheFailureOnce() async {
        let lock = Lock(NoFields())
        _ = offer([1, 2], to: lock)
        let handedBack = lock.locked { state, effects in
            state.finish(failure: .closedByPeer, keepingBuffered: true, &effects).count
        }
        #expect(handedBack == 0)
        #expect(offer([3], to: lock) == [.refused])
        var taken: [Result<Int?, SocketError>] = []
        for _ in 0..<4 { taken.append(await lock.next()) }
        #expect(taken == [.success(1), .success(2), .failure(.closedByPeer), .success(nil)])
    }

    @Test func finishingWithoutKeepingHandsTheBufferedBack() async {
        let lock = Lock(NoFields())
        _ = offer([1, 2], to: lock)
        var handedBack = lock.locked { state, effects in
            state.finish(failure: .connectionClosed, keepingBuffered: false, &effects)
        }
        #expect([handedBack.popFirst(), handedBack.popFirst(), handedBack.popFirst()] == [1, 2, nil])
        #expect(lock.withLock { $0.bufferedCount } == 0)
        #expect(await lock.next() == .failure(.connectionClosed))
        #expect(await lock.next() == .success(nil))
    }

    @Test func finishingAgainHandsBackWhatWasKeptAndKeepsTheFailure() async {
        let lock = Lock(NoFields())
        _ = offer([1, 2], to: lock)
        var handedBack = lock.locked { state, effects in
            state.finish(failure: .closedByPeer, keepingBuffered: true, &effects)
            return state.finish(failure: nil, keepingBuffered: false, &effects)
        }
        #expect([handedBack.popFirst(), handedBack.popFirst(), handedBack.popFirst()] == [1, 2, nil])
        #expect(await lock.next() == .failure(.closedByPeer))
        #expect(await lock.next() == .success(nil))
    }

    @Test func theFailureGoesToTheFirstWaitingCallOnly() async {
        let lock = Lock(NoFields())
        let first = Task { await lock.next() }
        await waitForWaiters(1, in: lock)
        let second = Task { await lock.next() }
        await waitForWaiters(2, in: lock)
        lock.locked { state, effects in state.finish(failure: .closedByPeer, keepingBuffered: true, &effects) }
        #expect(await first.value == .failure(.closedByPeer))
        #expect(await second.value == .success(nil))
        #expect(await lock.next() == .success(nil))
    }

    @Test func theFailureCanGoToEveryWaitingCall() async {
        let lock = Lock(NoFields())
        let first = Task { await lock.next() }
        await waitForWaiters(1, in: lock)
        let second = Task { await lock.next() }
        await waitForWaiters(2, in: lock)
        lock.locked { state, effects in
            state.finish(failure: .closedByPeer, failureToEveryWaiter: true, keepingBuffered: false, &effects)
        }
        #expect(await first.value == .failure(.closedByPeer))
        #expect(await second.value == .failure(.closedByPeer))
        #expect(await lock.next() == .success(nil))
    }

    @Test func cancellingAWaitingCallReturnsNilAndLeavesTheElementsForOthers() async {
        let lock = Lock(NoFields())
        let waiting = Task { await lock.next() }
        await waitForWaiters(1, in: lock)
        waiting.cancel()
        #expect(await waiting.value == .success(nil))
        #expect(lock.withLock { $0.waitingCount } == 0)
        #expect(offer([4], to: lock) == [.buffered(count: 1)])
    }

    @Test func aCancelledTaskTakesNothing() async {
        let lock = Lock(NoFields())
        _ = offer([1], to: lock)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await lock.next()
        }
        #expect(await cancelled.value == .success(nil))
        #expect(lock.withLock { $0.bufferedCount } == 1)
        #expect(await lock.next() == .success(1))
    }

    @Test func closeRequestsOnceAndWaitsForTheEnd() async {
        let lock = Lock(NoFields())
        let calls = LockedValue<[String]>([])
        for _ in 0..<2 {
            await lock.close(
                request: { state, _ in
                    let requested = state.closeRequested
                    calls.withLock { $0.append("request \(requested)") }
                },
                end: {
                    // The socket reports its end inline, as a socket closed on its own loop would.
                    calls.withLock { $0.append("end") }
                    lock.locked { state, effects in
                        state.ended = .connectionClosed
                        state.resumeCloseWaiters(&effects)
                    }
                })
        }
        #expect(calls.withLock { $0 } == ["request true", "end"])
        #expect(lock.withLock { $0.closeRequested && $0.ended == .connectionClosed && $0.closeWaiters.isEmpty })
    }

    @Test func closeAfterTheEndReturnsAtOnce() async {
        let lock = Lock(NoFields())
        lock.withLock { $0.ended = .closedByPeer }
        let calls = LockedValue<[String]>([])
        await lock.close(
            request: { _, _ in calls.withLock { $0.append("request") } },
            end: { calls.withLock { $0.append("end") } })
        #expect(calls.withLock { $0 } == ["request"])
    }

    @Test func theQueueKeepsItsOrderAcrossCompaction() {
        var queue = ElementQueue<Int>()
        for element in 0..<100 { queue.append(element) }
        var taken: [Int] = []
        for _ in 0..<50 { taken.append(queue.popFirst() ?? -1) }
        for element in 100..<110 { queue.append(element) }
        #expect(queue.count == 60)
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == Array(0..<110))
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }
}
