@testable import AsyncSocket
import Foundation
import Testing
import TestSupport

/// Task cancellation: a cancelled read consumes nothing, a cancelled write still sends its bytes.
@Suite struct AsyncCancellationTests {
    @Test func cancelledReadThrowsCancellationErrorAndTheNextReadGetsEveryByte() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let reading = Task { try await server.read(exactly: 10) }
        try await pair.client.write(bytes("01234"))
        // The cancelled read had already taken these five bytes from the socket.
        try await waitUntil { server.bridge.unreadBytes == 5 }
        reading.cancel()
        let error = try await thrownError { _ = try await reading.value }
        #expect(error is CancellationError)
        try await pair.client.write(bytes("56789"))
        #expect(text(try await within { try await server.read(exactly: 10) }) == "0123456789")
        await pair.close()
    }

    @Test func cancelledDelimiterReadDoesNotHoldBackTheNextRead() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let reading = Task { try await server.read(upTo: TCPSocket.lfData) }
        try await waitUntil { server.bridge.readsQueued == 1 }
        reading.cancel()
        let error = try await thrownError { _ = try await reading.value }
        #expect(error is CancellationError)
        // No newline will come: the next read still gets the bytes at once.
        try await pair.client.write(bytes("partial"))
        #expect(text(try await within { try await server.read(maxLength: 100) }) == "partial")
        // And the connection goes on as before.
        try await server.write(bytes("still open"))
        #expect(text(try await within { try await pair.client.read(exactly: 10) }) == "still open")
        await pair.close()
    }

    @Test func cancellingOneOfSeveralQueuedReadsLeavesTheOthersInOrder() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let first = Task { try await server.read(exactly: 3) }
        try await waitUntil { server.bridge.readsQueued == 1 }
        let second = Task { try await server.read(exactly: 3) }
        try await waitUntil { server.bridge.readsQueued == 2 }
        let third = Task { try await server.read(exactly: 3) }
        try await waitUntil { server.bridge.readsQueued == 3 }
        second.cancel()
        #expect(try await thrownError { _ = try await second.value } is CancellationError)
        try await pair.client.write(bytes("abcdef"))
        #expect(text(try await within { try await first.value }) == "abc")
        #expect(text(try await within { try await third.value }) == "def")
        await pair.close()
    }

    @Test func readOrWriteOnAnAlreadyCancelledTaskQueuesNothing() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let client = pair.client
        let errors = Task { () -> [ErrorBox] in
            withUnsafeCurrentTask { $0?.cancel() }
            var errors: [ErrorBox] = []
            do { _ = try await server.read() } catch { errors.append(ErrorBox(error)) }
            do { try await client.write(bytes("never sent")) } catch { errors.append(ErrorBox(error)) }
            return errors
        }
        let thrown = try await within { await errors.value }
        #expect(thrown.count == 2)
        #expect(thrown.allSatisfy { $0.error is CancellationError })
        #expect(server.bridge.readsQueued == 0)
        try await client.write(bytes("sent"))
        #expect(text(try await within { try await server.read(maxLength: 100) }) == "sent")
        await pair.close()
    }

    @Test func cancelledWriteThrowsAtOnceButItsBytesAreStillSentInOrder() async throws {
        let pair = try await ConnectedPair.open()
        let client = pair.client
        // 32 MiB: far more than the kernel buffers while the server reads nothing.
        let pattern = Data((0..<251).map { UInt8($0) })
        var payload = Data(capacity: 32 << 20)
        while payload.count < 32 << 20 { payload.append(pattern) }
        let sent = payload
        let writing = Task { try await client.write(sent) }
        // One byte arrives: the write has started, and cannot finish before the server reads more.
        let first = try await within { try await pair.server.read(exactly: 1) }
        writing.cancel()
        #expect(try await thrownError { try await writing.value } is CancellationError)
        // A later write queues behind the cancelled one's bytes (and returns once they are all sent).
        let tail = Task { try await client.write(bytes("tail")) }
        let rest = try await within(.seconds(60)) { try await pair.server.read(exactly: sent.count - 1) }
        #expect(first + rest == sent)
        #expect(text(try await within { try await pair.server.read(exactly: 4) }) == "tail")
        try await within { try await tail.value }
        await pair.close()
    }

    @Test func cancelledWaitForTheReadStreamLeavesTheConnectionUsable() async throws {
        let pair = try await ConnectedPair.open()
        let server = pair.server
        let waiting = Task { try await server.waitUntilReadStreamClosed() }
        waiting.cancel()
        #expect(try await thrownError { try await waiting.value } is CancellationError)
        try await pair.client.write(bytes("ok"))
        #expect(text(try await within { try await server.read(exactly: 2) }) == "ok")
        await pair.close()
    }
}
