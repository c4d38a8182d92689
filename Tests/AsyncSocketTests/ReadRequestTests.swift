@testable import AsyncSocket
import TestSupport
import Foundation
import Testing

@Suite struct ReadRequestTests {
    private func match(_ kind: ReadRequest.Kind, _ text: String, scanned: Int = 0) -> ReadRequest.Match {
        var request = ReadRequest(kind: kind, timeout: -1, tag: 0, completion: .delegate(buffer: nil, offset: 0))
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

/// The core's one framing primitive: a consumer shown the unread bytes says what it consumed.
@Suite struct ConsumingReadTests {
    /// A 2-byte big-endian length prefix counting the body; frames of over 100 bytes are refused.
    struct PrefixTooLong: Error, CustomStringConvertible {
        let length: Int
        var description: String { "frame of \(length) bytes" }
    }

    /// The length of the first prefixed frame of `bytes`, or nil while it is incomplete.
    static func prefixedLength(_ bytes: UnsafeRawBufferPointer) throws -> Int? {
        guard bytes.count >= 2 else { return nil }
        let length = 2 + (Int(bytes[0]) << 8 | Int(bytes[1]))
        if length > 100 { throw PrefixTooLong(length: length) }
        return bytes.count >= length ? length : nil
    }

    /// Completes with the first whole frame.
    static let oneFrame: ByteConsumer = { bytes in
        guard let length = try prefixedLength(bytes) else { return .needMoreData(consumed: 0) }
        return .complete(consumed: length)
    }

    func match(_ bytes: [UInt8], maxLength: Int = 0, _ consumer: @escaping ByteConsumer = ConsumingReadTests.oneFrame) -> ReadRequest.Match
    {
        let request = ReadRequest(
            kind: .consuming(consumer, maxLength: maxLength), timeout: -1, tag: 0,
            completion: .delegate(buffer: nil, offset: 0))
        return bytes.withUnsafeBytes { request.match($0) }
    }

    @Test func theConsumerDecidesWhatIsTakenAndWhetherTheReadIsDone() {
        #expect(match([0]) == .needMore(scanned: 1))
        #expect(match([0, 3, 1, 2]) == .needMore(scanned: 4))
        #expect(match([0, 3, 1, 2, 3, 9, 9]) == .complete(length: 5))
        #expect(match([0, 3, 1, 2], maxLength: 4) == .maxedOut(maxLength: 4))
        #expect(match([0, 3, 1, 2], maxLength: 5) == .needMore(scanned: 4))
        #expect(match([0, 200]) == .invalid(DecodingFailure(PrefixTooLong(length: 202))))
        #expect(match([1, 2, 3]) { _ in .needMoreData(consumed: 2) } == .consumed(2))
        #expect(match([]) { _ in .complete(consumed: 0) } == .complete(length: 0))
    }

    @Test func aConsumerThatClaimsBytesItWasNotShownFailsTheRead() {
        #expect(
            match([1, 2]) { _ in .complete(consumed: 3) }
                == .invalid(DecodingFailure(ConsumerContractViolation(consumed: 3, available: 2))))
        #expect(
            match([1, 2]) { _ in .needMoreData(consumed: -1) }
                == .invalid(DecodingFailure(ConsumerContractViolation(consumed: -1, available: 2))))
    }

    /// Formerly flaky (issue 9) as a test of the removed frame-end read kind: frames split and glued
    /// arrive whole, and a bad one ends the connection with the consumer's own error, typed.
    @Test func framesSplitAndGluedArriveWholeAndABadFrameEndsTheConnection() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let frames = EventRecorder<String>()
        let reads = EventRecorder<String>()
        server.read(
            .consuming(
                { bytes in
                    var consumed = 0
                    do {
                        while let length = try ConsumingReadTests.prefixedLength(UnsafeRawBufferPointer(rebasing: bytes[consumed...])) {
                            frames.record(
                                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[consumed + 2..<consumed + length]), as: UTF8.self))
                            consumed += length
                        }
                    } catch  where consumed > 0 {
                        // The frames before the bad one are taken; the bad one throws on the next call.
                    }
                    return .needMoreData(consumed: consumed)
                }, maxLength: 0), timeout: -1, tag: 1, token: ReadToken()
        ) { result in
            reads.record("\(result)")
        }
        // Two frames glued, a third split after its first byte, then a length over the framing's limit.
        pair.client.write(Data([0, 2, 65, 66, 0, 1, 67, 0]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await frames.next(2) == ["AB", "C"])
        pair.client.write(Data([3, 68, 69, 70, 1, 0]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await frames.next() == "DEF")
        #expect(try await reads.next() == "failure(decoding failed: frame of 258 bytes)")
        let events = try await pair.serverDelegate.events.next(2)
        #expect(
            events.map(\.description) == [
                #"willDisconnect(unread: "\u{01}\0", unsentTags: [])"#,
                "disconnected(decoding failed: frame of 258 bytes)"
            ])
        guard case .disconnected(.decodingFailed(let failure)?) = events[1] else {
            Issue.record("expected a decoding failure, got \(events[1])")
            return
        }
        #expect(failure.underlying as? PrefixTooLong != nil)
    }

    /// A withdrawn read leaves every byte for the next read.
    @Test func aWithdrawnReadLeavesItsBytesForTheNextRead() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let token = ReadToken()
        let results = EventRecorder<String>()
        server.read(.toLength(10), timeout: -1, tag: 1, token: token) { results.record("first \($0)") }
        pair.client.write(Data("abcd".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        try await waitUntil("the bytes arrive") { server.bufferedReadBytes == 4 }
        let withdrawn = server.eventLoop.runAndWait { server.withdrawRead(token) }
        #expect(withdrawn)
        #expect(server.eventLoop.runAndWait { server.withdrawRead(token) } == false)
        server.read(.toLength(4), timeout: -1, tag: 2, token: ReadToken()) { result in
            results.record("second \(result.map { String(decoding: $0, as: UTF8.self) })")
        }
        #expect(try await results.next() == "second success(\"abcd\")")
        #expect(results.pending.isEmpty)
    }
}
