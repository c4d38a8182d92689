@testable import AsyncSocket
import Testing

/// The read and write queues: first in, first out, with the first element inline and the rest in an
/// array, through every operation the socket uses.
@Suite struct RequestQueueTests {
    private func contents(_ queue: RequestQueue<Int>) -> [Int] {
        (0..<queue.count).map { queue[$0] }
    }

    @Test func keepsOrderAcrossAppendsAndRemovals() {
        var queue = RequestQueue<Int>()
        #expect(queue.isEmpty && queue.count == 0 && queue.first == nil)
        for value in 1...5 { queue.append(value) }
        #expect(queue.count == 5 && queue.first == 1)
        #expect(contents(queue) == [1, 2, 3, 4, 5])
        #expect(queue.removeFirst() == 1)
        #expect(queue.removeFirst() == 2)
        queue.append(6)
        #expect(contents(queue) == [3, 4, 5, 6])
        #expect([queue.removeFirst(), queue.removeFirst(), queue.removeFirst(), queue.removeFirst()] == [3, 4, 5, 6])
        #expect(queue.isEmpty && queue.first == nil)
        queue.append(7)
        #expect(contents(queue) == [7])
    }

    @Test func updatesAndReplacesInPlace() {
        var queue = RequestQueue<Int>()
        queue.append(10)
        queue.append(20)
        queue.append(30)
        let doubled = queue.updateFirst { first -> Int in
            first *= 2
            return first
        }
        #expect(doubled == 20)
        queue[0] = 11
        queue[2] = 33
        #expect(contents(queue) == [11, 20, 33])
    }

    @Test func findsAndRemovesInTheMiddle() {
        var queue = RequestQueue<Int>()
        for value in [1, 2, 3, 4] { queue.append(value) }
        queue.removeFirst()
        #expect(queue.firstIndex { $0 == 2 } == 0)
        #expect(queue.firstIndex { $0 == 4 } == 2)
        #expect(queue.firstIndex { $0 == 9 } == nil)
        queue.remove(at: 1)
        #expect(contents(queue) == [2, 4])
        queue.remove(at: 0)
        #expect(contents(queue) == [4])
        #expect(queue.removeAll() == [4])
        #expect(queue.isEmpty && queue.removeAll() == [])
    }

    @Test func staysInOrderOverManyPipelinedRequests() {
        var queue = RequestQueue<Int>()
        var expected = 0
        var next = 0
        // Appends run ahead of removals by up to 200, so the array part compacts many times.
        for round in 0..<1_000 {
            for _ in 0..<(round % 3 == 0 ? 3 : 1) where next - expected < 200 {
                queue.append(next)
                next += 1
            }
            if !queue.isEmpty {
                #expect(queue.removeFirst() == expected)
                expected += 1
            }
        }
        #expect(queue.count == next - expected)
        #expect(queue.removeAll() == Array(expected..<next))
    }
}
