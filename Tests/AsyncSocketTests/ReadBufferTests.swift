import Testing
@testable import AsyncSocket

@Suite struct ReadBufferTests {
    func contents(_ buffer: borrowing ReadBuffer) -> [UInt8] { buffer.withUnsafeReadableBytes { Array($0) } }

    @Test func appendedBytesComeOutInOrderAcrossCompactionAndGrowth() {
        var buffer = ReadBuffer()
        var expected: [UInt8] = []
        for round in 0..<50 {
            let chunk = (0..<(round * 37 % 300 + 1)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            chunk.withUnsafeBytes { buffer.append($0) }
            expected += chunk
            let take = min(expected.count, round * 53 % 250)
            buffer.consume(take)
            expected.removeFirst(take)
            let count = buffer.count
            #expect(count == expected.count)
        }
        #expect(contents(buffer) == expected)
    }

    @Test func readingInPlaceKeepsOnlyWhatTheReadReports() {
        var buffer = ReadBuffer()
        ([1, 2, 3] as [UInt8]).withUnsafeBytes { buffer.append($0) }
        let room = buffer.room(upTo: 1000)
        #expect(room.count >= 250 && room.count <= 1000)
        room.storeBytes(of: 9, toByteOffset: 0, as: UInt8.self)
        room.storeBytes(of: 8, toByteOffset: 1, as: UInt8.self)
        buffer.didAppend(2)
        #expect(contents(buffer) == [1, 2, 3, 9, 8])
        // A read that got nothing (EAGAIN, end of stream) adds nothing.
        _ = buffer.room(upTo: 10)
        buffer.didAppend(0)
        #expect(contents(buffer) == [1, 2, 3, 9, 8])
    }

    @Test func emptyingTheBufferStartsAfreshAndLargeStorageIsReleased() {
        var buffer = ReadBuffer()
        let large = [UInt8](repeating: 7, count: 3 * ReadBuffer.retainedCapacity)
        large.withUnsafeBytes { buffer.append($0) }
        buffer.consume(large.count)
        let isEmpty = buffer.isEmpty
        #expect(isEmpty)
        ([4, 5] as [UInt8]).withUnsafeBytes { buffer.append($0) }
        #expect(contents(buffer) == [4, 5])
    }
}

/// Regression (issue 12): a connection holding 4 KiB of an unfinished frame reserved room for a whole
/// scratch buffer's read (256 KiB) at its first in-place read; now the room doubles what is buffered.
@Suite struct ReadBufferInPlaceGrowthTests {
    @Test func anInPlaceReadTakesAsManyBytesAgainAsAreBufferedWithinTheScratchSize() {
        #expect(ReadBuffer.inPlaceReadLength(unread: 10, maximum: 256 * 1024) == 4096)
        #expect(ReadBuffer.inPlaceReadLength(unread: 4103, maximum: 256 * 1024) == 4103)
        #expect(ReadBuffer.inPlaceReadLength(unread: 100_000, maximum: 256 * 1024) == 100_000)
        #expect(ReadBuffer.inPlaceReadLength(unread: 300_000, maximum: 256 * 1024) == 256 * 1024)
    }

    @Test func aStalledPartialFrameOfFourKiBHoldsAboutEightKiB() {
        var buffer = ReadBuffer()
        let partial = [UInt8](repeating: 1, count: 7 + 4096)
        partial.withUnsafeBytes { buffer.append($0) }
        let room = buffer.room(upTo: ReadBuffer.inPlaceReadLength(unread: buffer.count, maximum: 256 * 1024))
        room.storeBytes(of: 2, toByteOffset: 0, as: UInt8.self)
        buffer.didAppend(1)
        #expect(buffer.count == 4104)
        #expect(buffer.capacity == 2 * 4103)
    }
}
