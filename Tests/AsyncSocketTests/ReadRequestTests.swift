@testable import AsyncSocket
import Testing

@Suite struct ReadRequestTests {
    private func match(_ kind: ReadRequest.Kind, _ text: String, scanned: Int = 0) -> ReadRequest.Match {
        var request = ReadRequest(kind: kind, timeout: -1, tag: 0)
        request.scanned = scanned
        return Array(text.utf8).withUnsafeBytes { request.match($0) }
    }

    private let crlf: [UInt8] = [0x0D, 0x0A]

    @Test func availableTakesEverythingOrUpToTheMaximum() {
        #expect(match(.available(maxLength: 0), "") == .needMore(scanned: 0))
        #expect(match(.available(maxLength: 0), "abcdef") == .complete(length: 6))
        #expect(match(.available(maxLength: 4), "abcdef") == .complete(length: 4))
    }

    @Test func toLengthWaitsForEveryByte() {
        #expect(match(.toLength(5), "abcd") == .needMore(scanned: 4))
        #expect(match(.toLength(5), "abcde") == .complete(length: 5))
        #expect(match(.toLength(5), "abcdefgh") == .complete(length: 5))
    }

    @Test func delimiterFoundAndOverflowLeftForTheNextRead() {
        #expect(match(.toData(delimiter: crlf, maxLength: 0), "ab\r\ncd") == .complete(length: 4))
        #expect(match(.toData(delimiter: crlf, maxLength: 0), "ab\r") == .needMore(scanned: 3))
    }

    @Test func delimiterSplitAcrossReadsIsFoundWhenTheSearchResumes() {
        // "ab\r" was searched already; the resumed search backs up one byte to catch "\r\n".
        #expect(match(.toData(delimiter: crlf, maxLength: 0), "ab\r\n", scanned: 3) == .complete(length: 4))
        let long: [UInt8] = Array("<end>".utf8)
        #expect(match(.toData(delimiter: long, maxLength: 0), "xx<en", scanned: 5) == .needMore(scanned: 5))
        #expect(match(.toData(delimiter: long, maxLength: 0), "xx<end>", scanned: 5) == .complete(length: 7))
    }

    @Test func maximumLengthIsInclusiveOfTheDelimiter() {
        #expect(match(.toData(delimiter: crlf, maxLength: 4), "ab\r\n") == .complete(length: 4))
        #expect(match(.toData(delimiter: crlf, maxLength: 4), "abc\r\n") == .maxedOut(maxLength: 4))
        #expect(match(.toData(delimiter: crlf, maxLength: 4), "abc") == .needMore(scanned: 3))
        // A delimiter beyond the maximum does not count, even if it has arrived.
        #expect(match(.toData(delimiter: crlf, maxLength: 3), "abcd\r\n") == .maxedOut(maxLength: 3))
    }

    @Test func firstOfSeveralDelimitersWins() {
        #expect(match(.toData(delimiter: [0x0A], maxLength: 0), "a\nb\nc\n") == .complete(length: 2))
        #expect(match(.toData(delimiter: [0x00], maxLength: 0), "\u{0}") == .complete(length: 1))
    }
}

@Suite struct TimerHeapTests {
    @Test func popsInDeadlineOrderAndFirstInFirstOutForTies() {
        var heap = TimerHeap()
        var fired: [String] = []
        let entries = [(30, "c"), (10, "a1"), (20, "b"), (10, "a2"), (5, "z")].enumerated().map { index, item in
            TimerEntry(deadline: UInt64(item.0), sequence: UInt64(index), task: {})
        }
        let names = ["c", "a1", "b", "a2", "z"]
        for entry in entries { heap.insert(entry) }
        heap.remove(entries[4])  // "z" cancelled
        while let entry = heap.popExpired(now: 25) {
            fired.append(names[entries.firstIndex { $0 === entry }!])
        }
        #expect(fired == ["a1", "a2", "b"])
        #expect(heap.count == 1)
        #expect(heap.first === entries[0])
    }

    @Test func removingFromTheMiddleKeepsTheHeapOrdered() {
        var heap = TimerHeap()
        let entries = (0..<100).map { TimerEntry(deadline: UInt64(($0 * 37) % 100), sequence: UInt64($0), task: {}) }
        for entry in entries { heap.insert(entry) }
        for entry in entries where entry.deadline % 3 == 0 { heap.remove(entry) }
        var deadlines: [UInt64] = []
        while let entry = heap.popExpired(now: .max) { deadlines.append(entry.deadline) }
        #expect(deadlines == (0..<100).map(UInt64.init).filter { $0 % 3 != 0 })
    }
}
