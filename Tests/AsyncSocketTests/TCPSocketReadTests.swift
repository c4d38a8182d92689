import AsyncSocket
import Dispatch
import Foundation
import Testing
import TestSupport

@Suite struct TCPSocketReadTests {
    /// Writes `chunks` one after another, each waiting for the previous to reach the kernel, so they
    /// arrive as separate reads (TCP_NODELAY is on).
    func send(_ chunks: [String], from socket: TCPSocket, delegate: RecordingDelegate) async throws {
        for (index, chunk) in chunks.enumerated() {
            socket.write(Data(chunk.utf8), withTimeout: 5, tag: 1000 + index)
            _ = try await delegate.events.first { $0.description == "wrote(tag: \(1000 + index))" }
        }
    }

    @Test func delimiterSplitAcrossReadsIsFoundAndTheOverflowCarriesToTheNextRead() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(to: TCPSocket.crlfData, withTimeout: 5, tag: 1)
        server.readData(to: TCPSocket.crlfData, withTimeout: 5, tag: 2)
        server.readData(toLength: 3, withTimeout: 5, tag: 3)
        // "\r" and "\n" arrive in different reads; the tail of one line comes with the next.
        try await send(["first\r", "\nsec", "ond\r\nxyz"], from: pair.client, delegate: pair.clientDelegate)
        let reads = try await pair.serverDelegate.events.next(3) { !$0.isProgress }
        #expect(reads.map(\.description) == [#"read("first\r\n", tag: 1)"#, #"read("second\r\n", tag: 2)"#, #"read("xyz", tag: 3)"#])
    }

    @Test func readsIntoACallersBufferAtAnOffset() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let buffer = NSMutableData(data: Data("HEADER:".utf8))
        server.readData(toLength: 5, withTimeout: 5, buffer: buffer, bufferOffset: 7, tag: 1)
        server.readData(to: TCPSocket.lfData, withTimeout: 5, buffer: buffer, bufferOffset: 2, maxLength: 10, tag: 2)
        server.readData(withTimeout: 5, buffer: nil, bufferOffset: 0, maxLength: 2, tag: 3)
        pair.client.write(Data("hello\nxy!".utf8), withTimeout: 5, tag: 0)
        let reads = try await pair.serverDelegate.events.next(3) { !$0.isProgress }
        #expect(reads.map(\.description) == [#"read("hello", tag: 1)"#, #"read("\n", tag: 2)"#, #"read("xy", tag: 3)"#])
        // "hello" landed after the header; the second read overwrote byte 2 with "\n".
        #expect(String(decoding: buffer as Data, as: UTF8.self) == "HE\nDER:hello")
    }

    @Test func badRequestsAreRejectedWithTheirReasonInsteadOfDropped() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: 0, withTimeout: 5, tag: 1)
        server.readData(to: Data(), withTimeout: 5, tag: 2)
        server.readData(withTimeout: 5, buffer: NSMutableData(length: 3), bufferOffset: 4, tag: 3)
        server.readData(to: TCPSocket.crlfData, withTimeout: 5, maxLength: 1, tag: 4)
        server.write(Data(), withTimeout: 5, tag: 5)
        let idle = TCPSocket(delegate: pair.serverDelegate, delegateQueue: nil)
        idle.readData(withTimeout: 5, tag: 6)
        idle.write(Data("x".utf8), withTimeout: 5, tag: 7)
        let rejections = try await pair.serverDelegate.events.next(7).map(\.description)
        #expect(Set(rejections) == [
            "rejectedRead(tag: 1, bad parameter: a read to length needs a length above 0)",
            "rejectedRead(tag: 2, bad parameter: a read to a delimiter needs a delimiter of at least one byte)",
            "rejectedRead(tag: 3, bad parameter: bufferOffset 4 is past the buffer's end (3 bytes))",
            "rejectedRead(tag: 4, bad parameter: maxLength 1 is shorter than the delimiter)",
            "rejectedWrite(tag: 5, bad parameter: a write needs at least one byte)",
            "rejectedRead(tag: 6, the socket is not connected or connecting)",
            "rejectedWrite(tag: 7, the socket is not connected or connecting)",
        ])
        #expect(server.isConnected)
    }

    @Test func partialProgressIsReportedAndReadable() async throws {
        let pair = try LoopbackPair(recordsProgress: true)
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: 10, withTimeout: 5, tag: 9)
        try await send(["abcd"], from: pair.client, delegate: pair.clientDelegate)
        #expect(try await pair.serverDelegate.events.next().description == "readPartial(4, tag: 9)")
        #expect(server.progressOfRead() == TransferProgress(tag: 9, bytesDone: 4, total: 10))
        #expect(server.progressOfRead()?.fraction == 0.4)
        try await send(["efg"], from: pair.client, delegate: pair.clientDelegate)
        #expect(try await pair.serverDelegate.events.next().description == "readPartial(3, tag: 9)")
        try await send(["hij"], from: pair.client, delegate: pair.clientDelegate)
        #expect(try await pair.serverDelegate.events.next().description == #"read("abcdefghij", tag: 9)"#)
        #expect(server.progressOfRead() == nil)
        #expect(server.progressOfWrite() == nil)
    }

    @Test func writeProgressIsReportedForALargeWrite() async throws {
        let pair = try LoopbackPair(recordsProgress: true)
        defer { pair.close() }
        let server = try await pair.connect()
        let size = 32 << 20
        pair.client.write(Data(count: size), withTimeout: -1, tag: 4)
        // The peer does not read yet, so the write stops part-way.
        let partial = try await pair.clientDelegate.events.next()
        guard case .wrotePartial(let sent, 4) = partial else { Issue.record("got \(partial)"); return }
        let progress = try #require(pair.client.progressOfWrite())
        #expect(progress.tag == 4 && progress.total == UInt(size) && progress.bytesDone >= sent && progress.bytesDone < UInt(size))
        server.readData(toLength: UInt(size), withTimeout: 10, tag: 1)
        let done = try await pair.clientDelegate.events.first { !$0.isProgress }
        #expect(done.description == "wrote(tag: 4)")
    }

    @Test func delegateExtendsAReadTimeoutAndSeesTheElapsedTotal() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock)
        defer { group.shutdown() }
        let pair = try LoopbackPair(group: group, recordsProgress: true)
        defer { pair.close() }
        let server = try await pair.connect()
        pair.serverDelegate.grantTimeoutExtensions([0.25, 0.5])
        server.readData(toLength: 10, withTimeout: 1, tag: 3)
        pair.client.write(Data("12345".utf8), withTimeout: -1, tag: 0)
        #expect(try await pair.serverDelegate.events.next().description == "readPartial(5, tag: 3)")
        // Virtual time: asked at 1 s, extended by 0.25 s; asked at 1.25 s, extended by 0.5 s; asked at
        // 1.75 s, and the answer 0 lets it fail.
        for step in [Duration.seconds(1), .milliseconds(250), .milliseconds(500)] {
            await clock.advance(by: step)
            #expect(try await pair.serverDelegate.timeoutQuestionEvents.next() == "read tag 3")
        }
        let events = try await pair.serverDelegate.events.next(2)
        #expect(events.map(\.description) == [
            #"willDisconnect(unread: "12345", unsentTags: [])"#, "disconnected(read timed out (tag 3))",
        ])
        #expect(pair.serverDelegate.timeoutQuestions == [
            "read tag 3 elapsed 1.0 bytesDone 5", "read tag 3 elapsed 1.25 bytesDone 5", "read tag 3 elapsed 1.75 bytesDone 5",
        ])
    }

    @Test func delegateExtendsAWriteTimeoutUntilThePeerReads() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock)
        defer { group.shutdown() }
        let pair = try LoopbackPair(group: group)
        defer { pair.close() }
        let server = try await pair.connect()
        pair.clientDelegate.grantTimeoutExtensions([5])
        let size = 32 << 20
        pair.client.write(Data(count: size), withTimeout: 2, tag: 6)
        await clock.advance(by: .zero)  // the write has started: its timeout runs from now
        await clock.advance(by: .seconds(2))
        #expect(try await pair.clientDelegate.timeoutQuestionEvents.next() == "write tag 6")
        // Extended by 5 s; the peer starts reading and the write completes within it.
        server.readData(toLength: UInt(size), withTimeout: -1, tag: 1)
        #expect(try await pair.clientDelegate.events.next().description == "wrote(tag: 6)")
        let question = try #require(pair.clientDelegate.timeoutQuestions.first)
        #expect(question.hasPrefix("write tag 6 elapsed 2.0 bytesDone "))
        #expect(pair.client.isConnected)
    }

    @Test func extendedReadThatCompletesInTimeSucceeds() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        pair.serverDelegate.grantTimeoutExtensions([30])
        server.readData(toLength: 4, withTimeout: 0.05, tag: 8)
        // Only once asked (the 0.05 s timeout passed) does the data arrive.
        #expect(try await pair.serverDelegate.timeoutQuestionEvents.next() == "read tag 8")
        pair.client.write(Data("late".utf8), withTimeout: 5, tag: 0)
        #expect(try await pair.serverDelegate.events.first { !$0.isProgress }.description == #"read("late", tag: 8)"#)
        #expect(server.isConnected)
    }
}
