import AsyncSocket
import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport

/// How connections end: the disconnect-after variants in GCDAsyncSocket's order, half-close, and what
/// is handed back when a connection ends with work outstanding.
@Suite struct TCPSocketEndingTests {
    @Test func disconnectAfterReadingWaitsForTheReadsButNotTheWrites() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: 3, withTimeout: -1, tag: 1)
        server.readData(toLength: 3, withTimeout: -1, tag: 2)
        server.disconnectAfterReading()
        server.readData(toLength: 3, withTimeout: -1, tag: 3)  // refused: disconnecting
        #expect(try await pair.serverDelegate.events.next() == .rejectedRead(tag: 3, .disconnecting))
        pair.client.write(Data("abcdef".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        let events = try await pair.serverDelegate.events.next(3) { !$0.isProgress }
        #expect(events.map(\.description) == [#"read("abc", tag: 1)"#, #"read("def", tag: 2)"#, "disconnected(nil)"])
    }

    @Test func disconnectAfterWritingDoesNotWaitForPendingReads() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: 100, withTimeout: -1, tag: 1)  // never satisfied
        server.write(Data("bye".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 2)
        server.disconnectAfterWriting()
        pair.client.readData(toLength: 3, withTimeout: -1, tag: 9)
        let events = try await pair.serverDelegate.events.next(2) { !$0.isProgress }
        #expect(events.map(\.description) == ["wrote(tag: 2)", "disconnected(nil)"])
        let clientEvents = try await pair.clientDelegate.events.next(2) { !$0.isProgress }
        #expect(clientEvents.map(\.description) == [#"read("bye", tag: 9)"#, "disconnected(socket closed by remote peer)"])
    }

    @Test func disconnectAfterReadingAndWritingWaitsForBoth() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        // No read timeout: not under test, and a starved test task (ThreadSanitizer) let a 5 s one fire.
        server.readData(toLength: 4, withTimeout: -1, tag: 1)
        server.write(Data("out".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 2)
        server.disconnectAfterReadingAndWriting()
        let firstEvents = try await pair.serverDelegate.events.next()
        #expect(firstEvents.description == "wrote(tag: 2)")  // writes are done; the read is not
        #expect(server.isConnected)
        pair.client.write(Data("last".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        let events = try await pair.serverDelegate.events.next(2) { !$0.isProgress }
        #expect(events.map(\.description) == [#"read("last", tag: 1)"#, "disconnected(nil)"])
    }

    @Test func unreadBytesAndUnsentWritesAreHandedBackWhenTheConnectionEnds() async throws {
        let pair = try LoopbackPair(recordsProgress: true)
        defer { pair.close() }
        let server = try await pair.connect()
        // A read to length that only half fills, then the peer goes away.
        server.readData(toLength: 10, withTimeout: -1, tag: 1)
        pair.client.write(Data("hello".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await pair.serverDelegate.events.next().description == "readPartial(5, tag: 1)")
        pair.client.disconnect()
        let events = try await pair.serverDelegate.events.next(2)
        #expect(
            events.map(\.description) == [
                #"willDisconnect(unread: "hello", unsentTags: [])"#, "disconnected(socket closed by remote peer)"
            ])
    }

    @Test func writesThatDidNotGoOutAreReportedByTag() async throws {
        let pair = try LoopbackPair(recordsProgress: true)
        defer { pair.close() }
        _ = try await pair.connect()  // the server never reads
        pair.client.write(Data(count: 32 << 20), withTimeout: -1, tag: 1)
        pair.client.write(Data("second".utf8), withTimeout: -1, tag: 2)
        pair.client.write(Data("third".utf8), withTimeout: -1, tag: 3)
        _ = try await pair.clientDelegate.events.first { $0.isProgress }
        pair.client.disconnect()
        let events = try await pair.clientDelegate.events.next(2) { !$0.isProgress }
        #expect(events.map(\.description) == [#"willDisconnect(unread: "", unsentTags: [1, 2, 3])"#, "disconnected(nil)"])
    }

    @Test func halfCloseKeepsTheSocketWritableAfterThePeersFin() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.autoDisconnectOnClosedReadStream = false
        server.readData(to: TCPSocket.lfData, withTimeout: -1, tag: 1)
        server.readData(toLength: 10, withTimeout: -1, tag: 2)  // can never complete
        // The client sends a request and closes its write side, as an HTTP/1.0 client may.
        pair.client.write(Data("request\npartial".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        pair.client.closeWriteStreamAfterWriting()
        #expect(try await pair.clientDelegate.events.next().description == "wrote(tag: 0)")
        pair.client.write(Data("too late".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 5)
        #expect(try await pair.clientDelegate.events.next() == .rejectedWrite(tag: 5, .writeStreamClosed))
        let serverEvents = try await pair.serverDelegate.events.next(3) { !$0.isProgress }
        #expect(
            serverEvents.map(\.description) == [
                #"read("request\n", tag: 1)"#, "rejectedRead(tag: 2, socket closed by remote peer)", "readStreamClosed"
            ])
        // The bytes of the unfinished read are still there for a read of what is available.
        server.readData(withTimeout: -1, tag: 3)
        #expect(try await pair.serverDelegate.events.next().description == #"read("partial", tag: 3)"#)
        server.readData(withTimeout: -1, tag: 4)
        #expect(try await pair.serverDelegate.events.next() == .rejectedRead(tag: 4, .closedByPeer))
        // Still writable: the response goes out, then the server closes its side too.
        pair.client.readData(toLength: 8, withTimeout: -1, tag: 7)
        server.write(Data("response".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 6)
        server.closeWriteStreamAfterWriting()
        #expect(try await pair.serverDelegate.events.next(2).map(\.description) == ["wrote(tag: 6)", "disconnected(nil)"])
        let clientEvents = try await pair.clientDelegate.events.next(2) { !$0.isProgress }
        #expect(clientEvents.map(\.description) == [#"read("response", tag: 7)"#, "disconnected(socket closed by remote peer)"])
    }

    @Test func noCallbackReachesADelegateOnceItIsRemoved() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let blocker = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "blocked")
        server.delegateQueue = queue
        queue.async { blocker.wait() }  // hold the queue so the callback waits behind it
        server.readData(toLength: 2, withTimeout: -1, tag: 1)
        pair.client.write(Data("hi".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        try await waitUntil("the read completed, its callback queued") { server.progressOfRead() == nil }
        server.delegate = nil
        blocker.signal()
        queue.sync {}
        #expect(pair.serverDelegate.events.pending.isEmpty)
    }

    @Test func synchronouslySettingTheDelegateWaitsForARunningCallback() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let queue = DispatchQueue(label: "delegate")
        let inCallback = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = LockedValue(false)
        let slow = RecordingDelegate(onRead: { socket, _, _ in
            inCallback.signal()
            release.wait()
            finished.withLock { $0 = true }
            // From inside a callback it returns at once instead of waiting for itself.
            socket.synchronouslySetDelegate(socket.delegate)
        })
        server.setDelegate(slow, delegateQueue: queue)
        server.readData(toLength: 1, withTimeout: -1, tag: 1)
        pair.client.write(Data("x".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        inCallback.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { release.signal() }
        server.synchronouslySetDelegate(nil)
        // It returned only after the running callback had finished.
        #expect(finished.withLock { $0 })
    }
}
