@testable import AsyncSocket
import TestSupport
import Foundation
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

@Suite struct FrameBoundaryReadTests {
    /// A 2-byte big-endian length prefix counting the body.
    static let prefixed: FrameBoundary = { bytes in
        guard bytes.count >= 2 else { return nil }
        let length = 2 + (Int(bytes[0]) << 8 | Int(bytes[1]))
        if length > 100 { throw SocketError.badParam("frame of \(length) bytes") }
        return bytes.count >= length ? length : nil
    }

    func match(_ bytes: [UInt8], maxLength: Int = 0) -> ReadRequest.Match {
        let request = ReadRequest(kind: .toFrameEnd(boundary: FrameBoundaryReadTests.prefixed, maxLength: maxLength), timeout: -1, tag: 0)
        return bytes.withUnsafeBytes { request.match($0) }
    }

    @Test func boundaryDecidesWhereTheFrameEnds() {
        #expect(match([0]) == .needMore(scanned: 1))
        #expect(match([0, 3, 1, 2]) == .needMore(scanned: 4))
        #expect(match([0, 3, 1, 2, 3, 9, 9]) == .complete(length: 5))
        #expect(match([0, 3, 1, 2, 3], maxLength: 4) == .maxedOut(maxLength: 4))
        #expect(match([0, 200]) == .invalid("bad parameter: frame of 202 bytes"))
    }

    @Test func framesSplitAndGluedArriveWholeAndABadFrameEndsTheConnection() async throws {
        let pair = try LoopbackPair(onServerRead: { socket, _, tag in
            socket.readData(toFrameEnd: FrameBoundaryReadTests.prefixed, withTimeout: 5, tag: tag + 1)
        })
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toFrameEnd: FrameBoundaryReadTests.prefixed, withTimeout: 5, tag: 1)
        // Two frames glued, a third split after its first byte, then a length over the framing's limit.
        pair.client.write(Data([0, 2, 65, 66, 0, 1, 67, 0]), withTimeout: 5, tag: 0)
        _ = try await pair.clientDelegate.events.next()
        pair.client.write(Data([3, 68, 69, 70, 1, 0]), withTimeout: 5, tag: 0)
        let events = try await pair.serverDelegate.events.next(5)
        #expect(events.map(\.description) == [
            #"read("\0\u{02}AB", tag: 1)"#, #"read("\0\u{01}C", tag: 2)"#, #"read("\0\u{03}DEF", tag: 3)"#,
            #"willDisconnect(unread: "\u{01}\0", unsentTags: [])"#,
            "disconnected(bad frame: bad parameter: frame of 258 bytes)",
        ])
    }
}

@Suite struct LastFrameEndReadTests {
    func match(_ bytes: [UInt8], maxLength: Int = 0) -> ReadRequest.Match {
        let request = ReadRequest(kind: .toLastFrameEnd(boundary: FrameBoundaryReadTests.prefixed, maxLength: maxLength), timeout: -1, tag: 0)
        return bytes.withUnsafeBytes { request.match($0) }
    }

    @Test func takesEveryWholeFrameAndLeavesThePartialOne() {
        #expect(match([]) == .needMore(scanned: 0))
        #expect(match([0, 3, 1, 2]) == .needMore(scanned: 4))
        #expect(match([0, 1, 7]) == .complete(length: 3))
        #expect(match([0, 1, 7, 0, 0, 0, 2, 8, 9]) == .complete(length: 9))
        #expect(match([0, 1, 7, 0, 0, 0, 2, 8]) == .complete(length: 5))
    }

    @Test func wholeFramesBeforeABadOrOversizedOneComeFirst() {
        #expect(match([0, 1, 7, 0, 200]) == .complete(length: 3))
        #expect(match([0, 200]) == .invalid("bad parameter: frame of 202 bytes"))
        #expect(match([0, 1, 7, 0, 5, 1, 2, 3, 4, 5], maxLength: 4) == .complete(length: 3))
        #expect(match([0, 5, 1, 2, 3, 4, 5], maxLength: 4) == .maxedOut(maxLength: 4))
    }

    @Test func aBurstOfFramesIsOneReadAndTheRestFollowsWhole() async throws {
        let pair = try LoopbackPair(onServerRead: { socket, _, tag in
            socket.readData(toLastFrameEnd: FrameBoundaryReadTests.prefixed, withTimeout: 5, tag: tag + 1)
        })
        defer { pair.close() }
        let server = try await pair.connect()
        // Written before the read is queued, so all of it is there when the first read looks.
        pair.client.write(Data([0, 2, 65, 66, 0, 1, 67, 0]), withTimeout: 5, tag: 0)
        _ = try await pair.clientDelegate.events.next()
        server.readData(toLastFrameEnd: FrameBoundaryReadTests.prefixed, withTimeout: 5, tag: 1)
        let first = try await pair.serverDelegate.events.next()
        #expect(first.description == #"read("\0\u{02}AB\0\u{01}C", tag: 1)"#)
        pair.client.write(Data([3, 68, 69, 70, 1, 0]), withTimeout: 5, tag: 0)
        let events = try await pair.serverDelegate.events.next(3)
        #expect(events.map(\.description) == [
            #"read("\0\u{03}DEF", tag: 2)"#,
            #"willDisconnect(unread: "\u{01}\0", unsentTags: [])"#,
            "disconnected(bad frame: bad parameter: frame of 258 bytes)",
        ])
    }
}
