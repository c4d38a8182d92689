@testable import AsyncSocket
import Foundation
import Glibc
import Testing
import TestSupport

/// A ``TCPSocket`` on a fake descriptor of an embedded loop: everything runs on the test's thread when
/// the test runs the loop, the reads and writes return what the test scripted, and time is virtual.
/// The tests here are synchronous on purpose: an embedded loop belongs to the thread that made it.
final class EmbeddedConnection {
    let io = ScriptedSocketIO()
    let loop: EventLoop
    let fd: Int32
    let delegate: RecordingDelegate
    let socket: TCPSocket
    private var seen = 0

    init(recordsProgress: Bool = false) {
        loop = EventLoop.embedded(io)
        fd = io.makeDescriptor()
        delegate = RecordingDelegate(recordsProgress: recordsProgress)
        socket = TCPSocket.embedded(fd: fd, on: loop, delegate: delegate)
        loop.run()
    }

    /// Closes the socket, so the loop (which holds its registered sockets) and the socket are freed.
    deinit {
        socket.disconnect()
    }

    /// The delegate callbacks since the last call, described.
    func newEvents() -> [String] {
        let all = delegate.events.all
        defer { seen = all.count }
        return all[seen...].map(\.description)
    }

    /// The error of the `disconnected` callback, if there was one.
    var disconnectError: SocketError?? {
        for event in delegate.events.all { if case .disconnected(let error) = event { return .some(error) } }
        return nil
    }

    /// The calls the socket made on its descriptor since the last call.
    private var seenCalls = 0
    func newCalls() -> [String] {
        defer { seenCalls = io.log.count }
        return Array(io.log[seenCalls...])
    }
}

private let second: Duration = .seconds(1)
private let nanosecond: Duration = .nanoseconds(1)

@Suite struct EmbeddedSocketReadTests {
    @Test func aReadToADelimiterCompletesAcrossScriptedChunks() {
        let connection = EmbeddedConnection()
        connection.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 1)
        connection.io.script(connection.fd, reads: .text("hel"), .text("lo\r"), .text("\nrest"))
        connection.loop.run()
        #expect(connection.newEvents() == [#"read("hello\r\n", tag: 1)"#])
        #expect(connection.newCalls() == ["read(1000) = 3", "read(1000) = 3", "read(1000) = 5"])
        #expect(connection.socket.bufferedReadBytes == 4)
        connection.socket.readData(to: TCPSocket.crlfData, withTimeout: -1, tag: 2)
        connection.io.script(connection.fd, reads: .text("\r\n"))
        connection.loop.run()
        #expect(connection.newEvents() == [#"read("rest\r\n", tag: 2)"#])
    }

    @Test func anInterruptedReadIsRetriedAtOnce() {
        let connection = EmbeddedConnection()
        connection.socket.readData(toLength: 4, withTimeout: -1, tag: 1)
        connection.io.script(connection.fd, reads: .failure(EINTR), .failure(EINTR), .text("abcd"))
        connection.loop.run()
        #expect(connection.newCalls() == ["read(1000) = EINTR", "read(1000) = EINTR", "read(1000) = 4"])
        #expect(connection.newEvents() == [#"read("abcd", tag: 1)"#])
        #expect(connection.socket.isConnected)
    }

    @Test func aSpuriousWakeUpThatWouldBlockChangesNothing() {
        let connection = EmbeddedConnection()
        connection.socket.readData(toLength: 2, withTimeout: -1, tag: 1)
        connection.io.script(connection.fd, reads: .wouldBlock, .text("o"), .wouldBlock, .text("k"))
        connection.loop.run()
        #expect(connection.newCalls() == ["read(1000) = EAGAIN", "read(1000) = 1", "read(1000) = EAGAIN", "read(1000) = 1"])
        #expect(connection.newEvents() == [#"read("ok", tag: 1)"#])
    }

    /// Was TCPSocketReadTests.partialProgressIsReportedAndReadable, on loopback, where it relied on each
    /// send arriving as one read.
    @Test func partialProgressIsReportedPerReadAndReadable() {
        let connection = EmbeddedConnection(recordsProgress: true)
        connection.socket.readData(toLength: 10, withTimeout: -1, tag: 9)
        connection.io.script(connection.fd, reads: .text("abcd"))
        connection.loop.run()
        #expect(connection.newEvents() == ["readPartial(4, tag: 9)"])
        #expect(connection.socket.progressOfRead() == TransferProgress(tag: 9, bytesDone: 4, total: 10))
        #expect(connection.socket.progressOfRead()?.fraction == 0.4)
        connection.io.script(connection.fd, reads: .text("efg"))
        connection.loop.run()
        #expect(connection.newEvents() == ["readPartial(3, tag: 9)"])
        connection.io.script(connection.fd, reads: .text("hij"))
        connection.loop.run()
        #expect(connection.newEvents() == [#"read("abcdefghij", tag: 9)"#])
        #expect(connection.socket.progressOfRead() == nil)
        #expect(connection.socket.progressOfWrite() == nil)
    }
}

@Suite struct EmbeddedSocketWriteTests {
    /// Was TCPSocketReadTests.writeProgressIsReportedForALargeWrite, which wrote 32 MiB into a loopback
    /// connection and depended on the kernel's buffer sizes for where the write stopped.
    @Test func aShortWriteReportsItsExactProgressAndCompletesOnceWritable() {
        let connection = EmbeddedConnection(recordsProgress: true)
        connection.io.setSendSpace(connection.fd, 3)
        connection.socket.write(Data("hello".utf8), withTimeout: -1, tag: 7)
        connection.loop.run()
        #expect(connection.newCalls() == ["writev(1000, 1 buffer, 5 bytes) = 3"])
        #expect(connection.newEvents() == ["wrotePartial(3, tag: 7)"])
        #expect(connection.socket.progressOfWrite() == TransferProgress(tag: 7, bytesDone: 3, total: 5))
        #expect(connection.io.writtenText(connection.fd) == "hel")
        // Not writable: the loop settles without trying again.
        connection.loop.run()
        #expect(connection.newCalls() == [])
        connection.io.addSendSpace(connection.fd, 10)
        connection.loop.run()
        #expect(connection.newCalls() == ["writev(1000, 1 buffer, 2 bytes) = 2"])
        #expect(connection.newEvents() == ["wrote(tag: 7)"])
        #expect(connection.io.writtenText(connection.fd) == "hello")
        #expect(connection.socket.progressOfWrite() == nil)
        #expect(connection.socket.queuedWriteBytes == 0)
    }

    @Test func writesQueuedTogetherGoOutInOneGatheredCallAndAWouldBlockWaits() {
        let connection = EmbeddedConnection()
        connection.io.setSendSpace(connection.fd, 0)
        connection.socket.write(Data("ab".utf8), withTimeout: -1, tag: 1)
        connection.socket.write(Data("cd".utf8), withTimeout: -1, tag: 2)
        connection.loop.run()
        #expect(connection.newCalls() == ["writev(1000, 2 buffers, 4 bytes) = EAGAIN"])
        #expect(connection.newEvents() == [])
        connection.io.addSendSpace(connection.fd, 100)
        connection.loop.run()
        #expect(connection.newCalls() == ["writev(1000, 2 buffers, 4 bytes) = 4"])
        #expect(connection.newEvents() == ["wrote(tag: 1)", "wrote(tag: 2)"])
    }

    @Test func anInterruptedWriteIsRetriedAtOnce() {
        let connection = EmbeddedConnection()
        connection.io.failWrites(connection.fd, with: EINTR)
        connection.socket.write(Data("xyz".utf8), withTimeout: -1, tag: 3)
        connection.loop.run()
        #expect(connection.newCalls() == ["writev(1000, 1 buffer, 3 bytes) = EINTR", "writev(1000, 1 buffer, 3 bytes) = 3"])
        #expect(connection.newEvents() == ["wrote(tag: 3)"])
    }

    @Test func aBrokenPipeEndsTheConnectionWithTheCallsError() {
        let connection = EmbeddedConnection()
        connection.io.failWrites(connection.fd, with: EPIPE)
        connection.socket.write(Data("a".utf8), withTimeout: -1, tag: 1)
        connection.socket.write(Data("b".utf8), withTimeout: -1, tag: 2)
        connection.loop.run()
        #expect(
            connection.newEvents() == [
                #"willDisconnect(unread: "", unsentTags: [1, 2])"#,
                "disconnected(\(SocketError.brokenPipe(operation: "sendmsg", errno: EPIPE)))"
            ])
        #expect(connection.disconnectError == .some(.brokenPipe(operation: "sendmsg", errno: EPIPE)))
        #expect(connection.io.isClosed(connection.fd))
    }

    /// Was WriteWatermarkTests.exceedingTheHighWatermarkAndDrainingToTheLowOneAreReported, which drained
    /// 8 MiB through a loopback connection.
    @Test func watermarksAreReportedExactlyWhenTheQueueCrossesThem() {
        let connection = EmbeddedConnection()
        connection.socket.writeHighWatermark = 8
        connection.socket.writeLowWatermark = 2
        connection.io.setSendSpace(connection.fd, 0)
        connection.socket.write(Data("12345".utf8), withTimeout: -1, tag: 1)
        #expect(connection.newEvents() == [])  // 5 queued: not above 8
        connection.socket.write(Data("6789".utf8), withTimeout: -1, tag: 2)
        // The write is queued, and the crossing reported, before the loop tries to send anything.
        #expect(connection.newEvents() == ["highWatermark(9)"])
        #expect(connection.socket.queuedWriteBytes == 9)
        connection.loop.run()
        connection.io.addSendSpace(connection.fd, 6)
        connection.loop.run()
        #expect(connection.newEvents() == ["wrote(tag: 1)"])  // 3 queued: not yet at 2
        #expect(connection.socket.queuedWriteBytes == 3)
        connection.io.addSendSpace(connection.fd, 1)
        connection.loop.run()
        #expect(connection.newEvents() == ["lowWatermark(2)"])
        connection.socket.write(Data("abcdefg".utf8), withTimeout: -1, tag: 3)
        #expect(connection.newEvents() == ["highWatermark(9)"])  // above 8 again
        connection.io.addSendSpace(connection.fd, 100)
        connection.loop.run()
        #expect(connection.newEvents() == ["lowWatermark(0)", "wrote(tag: 2)", "wrote(tag: 3)"])
        #expect(connection.io.writtenText(connection.fd) == "123456789abcdefg")
        #expect(connection.socket.queuedWriteBytes == 0)
    }
}

@Suite struct EmbeddedSocketEndingTests {
    @Test func aResetEndsTheConnectionWithThePosixErrorAndReportsWhatWasLeft() {
        let connection = EmbeddedConnection()
        connection.socket.readData(toLength: 10, withTimeout: -1, tag: 1)
        connection.io.setSendSpace(connection.fd, 0)
        connection.socket.write(Data("unsent".utf8), withTimeout: -1, tag: 5)
        connection.io.script(connection.fd, reads: .text("abc"), .failure(ECONNRESET))
        connection.loop.run()
        #expect(
            connection.newEvents() == [
                #"willDisconnect(unread: "abc", unsentTags: [5])"#,
                "disconnected(\(SocketError.connectionReset(operation: "read", errno: ECONNRESET)))"
            ])
        #expect(connection.disconnectError == .some(.connectionReset(operation: "read", errno: ECONNRESET)))
        // One round as the threaded loop's: the readable descriptor first, then the flush task; the
        // still-readable descriptor in the next round.
        #expect(
            connection.newCalls() == [
                "read(1000) = 3", "writev(1000, 1 buffer, 6 bytes) = EAGAIN", "read(1000) = ECONNRESET", "close(1000)"
            ])
        #expect(!connection.socket.isConnected)
    }

    @Test func endOfStreamWithoutHalfCloseDisconnects() {
        let connection = EmbeddedConnection()
        connection.socket.readData(withTimeout: -1, tag: 1)
        connection.io.script(connection.fd, reads: .text("last"), .endOfStream)
        connection.loop.run()
        #expect(connection.newEvents() == [#"read("last", tag: 1)"#, "disconnected(socket closed by remote peer)"])
        #expect(connection.io.isClosed(connection.fd))
    }

    @Test func endOfStreamWithHalfCloseKeepsWritingThenShutsDownAndDisconnects() {
        let connection = EmbeddedConnection()
        connection.socket.autoDisconnectOnClosedReadStream = false
        connection.io.script(connection.fd, reads: .text("partial"), .endOfStream)
        connection.loop.run()
        connection.socket.readData(withTimeout: -1, tag: 3)
        connection.loop.run()
        #expect(connection.newEvents() == [#"read("partial", tag: 3)"#, "readStreamClosed"])
        connection.socket.readData(withTimeout: -1, tag: 4)
        #expect(connection.newEvents() == ["rejectedRead(tag: 4, socket closed by remote peer)"])
        connection.socket.write(Data("response".utf8), withTimeout: -1, tag: 6)
        connection.socket.closeWriteStreamAfterWriting()
        connection.loop.run()
        #expect(connection.newEvents() == ["wrote(tag: 6)", "disconnected(nil)"])
        #expect(connection.io.writtenText(connection.fd) == "response")
        #expect(connection.io.shutdowns(connection.fd) == [Int32(SHUT_WR)])
        #expect(connection.io.isClosed(connection.fd))
    }
}

@Suite struct EmbeddedSocketTimeoutTests {
    /// A withdrawn read (a cancelled `TCPConnection` read) takes its timer with it: the read behind it
    /// becomes the current one with its own deadline, counted from then. Was
    /// BreakingTests.aCancelledReadsTimerGoesWithIt (250 ms and 500 ms wall-clock timeouts racing a
    /// cancellation: it failed twice in a 50-run soak when the cancel came after 250 ms).
    @Test func aWithdrawnReadTakesItsTimerAndTheNextReadGetsItsOwn() {
        let connection = EmbeddedConnection()
        let results = LockedValue<[String]>([])
        let first = ReadToken()
        connection.socket.read(.toLength(1), timeout: 0.25, tag: 1, token: first) { result in
            results.withLock { $0.append("first \(result)") }
        }
        connection.loop.advance(by: second / 8)
        #expect(connection.socket.withdrawRead(first))
        connection.socket.read(.toLength(1), timeout: 0.5, tag: 2) { result in
            results.withLock { $0.append("second \(result)") }
        }
        // The first read's deadline (0.25 s from its start) passes: nothing happens.
        connection.loop.advance(by: second / 2 - nanosecond)
        #expect(results.withLock { $0 } == [])
        #expect(connection.socket.isConnected)
        // The second read's own deadline: 0.5 s after it became the current one.
        connection.loop.advance(by: nanosecond)
        #expect(results.withLock { $0 } == ["second failure(read timed out (tag 2))"])
        #expect(connection.newEvents() == ["disconnected(read timed out (tag 2))"])
    }

    /// Was TCPSocketTransferTests.readTimeoutFiresWithTheRightTag (a 0.2 s wall-clock timeout).
    @Test func aReadTimeoutFiresAtExactlyItsDeadlineWithItsTag() {
        let connection = EmbeddedConnection()
        connection.socket.readData(toLength: 10, withTimeout: 2, tag: 42)
        connection.loop.advance(by: second * 2 - nanosecond)
        #expect(connection.newEvents() == [])
        #expect(connection.socket.isConnected)
        connection.loop.advance(by: nanosecond)
        #expect(connection.newEvents() == ["disconnected(read timed out (tag 42))"])
        #expect(connection.delegate.timeoutQuestions == ["read tag 42 elapsed 2.0 bytesDone 0"])
        #expect(connection.io.isClosed(connection.fd))
    }

    /// Was TCPSocketReadTests.delegateExtendsAReadTimeoutAndSeesTheElapsedTotal (a ManualClock on a
    /// threaded loop, each step awaited).
    @Test func theDelegateExtendsAReadTimeoutAndSeesTheElapsedTotal() {
        let connection = EmbeddedConnection(recordsProgress: true)
        connection.delegate.grantTimeoutExtensions([0.25, 0.5])
        connection.socket.readData(toLength: 10, withTimeout: 1, tag: 3)
        connection.io.script(connection.fd, reads: .text("12345"))
        connection.loop.run()
        #expect(connection.newEvents() == ["readPartial(5, tag: 3)"])
        // Asked at 1 s, extended by 0.25 s; asked at 1.25 s, extended by 0.5 s; asked at 1.75 s, and
        // the answer 0 lets it fail. Never a nanosecond early.
        for (step, asked) in [(second, 1), (second / 4, 2), (second / 2, 3)] {
            connection.loop.advance(by: step - nanosecond)
            #expect(connection.delegate.timeoutQuestions.count == asked - 1)
            connection.loop.advance(by: nanosecond)
            #expect(connection.delegate.timeoutQuestions.count == asked)
        }
        #expect(
            connection.newEvents() == [
                #"willDisconnect(unread: "12345", unsentTags: [])"#, "disconnected(read timed out (tag 3))"
            ])
        #expect(
            connection.delegate.timeoutQuestions == [
                "read tag 3 elapsed 1.0 bytesDone 5", "read tag 3 elapsed 1.25 bytesDone 5", "read tag 3 elapsed 1.75 bytesDone 5"
            ])
    }

    /// Was TCPSocketReadTests.extendedReadThatCompletesInTimeSucceeds (a 0.05 s wall-clock timeout).
    @Test func anExtendedReadThatCompletesInTimeSucceedsAndItsTimerIsGone() {
        let connection = EmbeddedConnection()
        connection.delegate.grantTimeoutExtensions([30])
        connection.socket.readData(toLength: 4, withTimeout: 0.25, tag: 8)
        connection.loop.advance(by: second / 4)
        #expect(connection.delegate.timeoutQuestions == ["read tag 8 elapsed 0.25 bytesDone 0"])
        connection.io.script(connection.fd, reads: .text("late"))
        connection.loop.run()
        #expect(connection.newEvents() == [#"read("late", tag: 8)"#])
        connection.loop.advance(by: second * 60)
        #expect(connection.newEvents() == [])
        #expect(connection.delegate.timeoutQuestions.count == 1)
        #expect(connection.socket.isConnected)
    }

    /// Was TCPSocketLifecycleTests.writeThatCannotCompleteInTimeDisconnectsWithWriteTimeoutAndItsTag
    /// (64 MiB into a loopback peer that never read, and a 0.3 s wall-clock timeout).
    @Test func aWriteThatCannotCompleteTimesOutAtExactlyItsDeadline() {
        let connection = EmbeddedConnection()
        connection.io.setSendSpace(connection.fd, 0)
        connection.socket.write(Data("stuck".utf8), withTimeout: 0.5, tag: 77)
        connection.loop.advance(by: second / 2 - nanosecond)
        #expect(connection.newEvents() == [])
        connection.loop.advance(by: nanosecond)
        #expect(
            connection.newEvents() == [
                #"willDisconnect(unread: "", unsentTags: [77])"#, "disconnected(write timed out (tag 77))"
            ])
        #expect(connection.delegate.timeoutQuestions == ["write tag 77 elapsed 0.5 bytesDone 0"])
    }

    /// Was TCPSocketReadTests.delegateExtendsAWriteTimeoutUntilThePeerReads (32 MiB through loopback;
    /// the bytes done only matched by prefix).
    @Test func theDelegateExtendsAWriteTimeoutAndSeesTheExactBytesDone() {
        let connection = EmbeddedConnection(recordsProgress: true)
        connection.delegate.grantTimeoutExtensions([5])
        connection.io.setSendSpace(connection.fd, 0)
        connection.socket.write(Data("0123456789".utf8), withTimeout: 2, tag: 6)
        connection.loop.advance(by: second * 2)
        #expect(connection.delegate.timeoutQuestions == ["write tag 6 elapsed 2.0 bytesDone 0"])
        connection.io.addSendSpace(connection.fd, 4)
        connection.loop.run()
        #expect(connection.newEvents() == ["wrotePartial(4, tag: 6)"])
        // Extended by 5 s from the first deadline: asked again at 7 s, not before.
        connection.loop.advance(by: second * 5 - nanosecond)
        #expect(connection.delegate.timeoutQuestions.count == 1)
        connection.loop.advance(by: nanosecond)
        #expect(
            connection.delegate.timeoutQuestions == [
                "write tag 6 elapsed 2.0 bytesDone 0", "write tag 6 elapsed 7.0 bytesDone 4"
            ])
        #expect(
            connection.newEvents() == [
                #"willDisconnect(unread: "", unsentTags: [6])"#, "disconnected(write timed out (tag 6))"
            ])
    }

    /// The same extension, and the peer reads within it: the write completes and the socket stays.
    @Test func aWriteCompletingWithinItsExtensionSucceeds() {
        let connection = EmbeddedConnection()
        connection.delegate.grantTimeoutExtensions([5])
        connection.io.setSendSpace(connection.fd, 0)
        connection.socket.write(Data("0123456789".utf8), withTimeout: 2, tag: 6)
        connection.loop.advance(by: second * 2)
        connection.loop.advance(by: second * 5 - nanosecond)
        connection.io.addSendSpace(connection.fd, 10)
        connection.loop.run()
        #expect(connection.newEvents() == ["wrote(tag: 6)"])
        connection.loop.advance(by: second * 60)
        #expect(connection.delegate.timeoutQuestions == ["write tag 6 elapsed 2.0 bytesDone 0"])
        #expect(connection.socket.isConnected)
    }
}

@Suite struct EmbeddedEventLoopTests {
    @Test func tasksAndTimersRunOnlyWhenTheTestRunsTheLoop() {
        let loop = EventLoop.embedded(ScriptedSocketIO())
        #expect(loop.inEventLoop)
        let recorder = EventRecorder<String>()
        loop.execute { recorder.record("task") }
        loop.scheduleTask(in: .milliseconds(20)) { recorder.record("20 ms") }
        let cancelled = loop.scheduleTask(in: .milliseconds(10)) { recorder.record("cancelled") }
        #expect(recorder.all == [])
        loop.run()
        #expect(recorder.all == ["task"])
        cancelled.cancel()
        loop.advance(by: .milliseconds(20) - nanosecond)
        #expect(recorder.all == ["task"])
        loop.advance(by: nanosecond)
        #expect(recorder.all == ["task", "20 ms"])
    }
}
