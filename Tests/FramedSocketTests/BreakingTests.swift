import AsyncSocket
import FramedSocket
import Foundation
import SocketFraming
import Testing
import TestSupport

/// FramedSocket under hostile arrival patterns and handlers that call back into the socket.
@Suite struct FramedBreakingTests {
    static func lengthPrefixed(_ bodies: [String]) -> Data { SocketFrameReadingTests.lengthPrefixed(bodies) }
    static func lp4(_ max: Int = 1024) -> SocketFrameDecoder<LengthFieldBasedFrameDecoder> {
        SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: max))
    }

    /// A frame handler that disconnects gets no further frame, and the frames it did not get are
    /// handed back as unread data, not the one it got.
    @Test func aHandlerThatDisconnectsGetsNoMoreFramesAndTheRestIsHandedBack() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<String>()
        server.readFrames(using: Self.lp4()) { _, frame in
            received.record(String(decoding: frame, as: UTF8.self))
            server.disconnect()
        }
        pair.client.write(Self.lengthPrefixed(["one", "two", "three"]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next() == "one")
        let events = try await pair.serverDelegate.events.next(2)
        #expect(events == [.willDisconnect(unread: Self.lengthPrefixed(["two", "three"]), unsentTags: []), .disconnected(nil)])
        #expect(received.pending.isEmpty)
    }

    /// The same when the frames arrive after others are already buffered (the slow path).
    @Test func aHandlerThatDisconnectsWithBytesAlreadyBufferedHandsBackOnlyTheRest() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        pair.client.write(Self.lengthPrefixed(["one", "two", "three"]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        try await waitUntil("the frames are buffered") { server.bufferedReadBytes == 23 }
        let received = EventRecorder<String>()
        server.readFrames(using: Self.lp4()) { _, frame in
            received.record(String(decoding: frame, as: UTF8.self))
            server.disconnect()
        }
        #expect(try await received.next() == "one")
        let events = try await pair.serverDelegate.events.next(2)
        #expect(events == [.willDisconnect(unread: Self.lengthPrefixed(["two", "three"]), unsentTags: []), .disconnected(nil)])
    }

    /// A one-frame read completed in the same arrival as the frame whose handler disconnects still gets
    /// its frame.
    @Test func aReadCompletedBeforeAHandlerDisconnectsStillCompletes() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let frames = Self.lp4()
        let received = EventRecorder<String>()
        server.readFrame(using: frames, withTimeout: -1) { result in
            received.record((try? result.get()).map { "first \(String(decoding: $0, as: UTF8.self))" } ?? "\(result)")
        }
        server.readFrames(using: frames) { _, frame in
            received.record("every \(String(decoding: frame, as: UTF8.self))")
            server.disconnect()
        }
        pair.client.write(Self.lengthPrefixed(["one", "two", "three"]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next(2) == ["first one", "every two"])
        #expect(
            try await pair.serverDelegate.events.next(2) == [
                .willDisconnect(unread: Self.lengthPrefixed(["three"]), unsentTags: []), .disconnected(nil)
            ])
    }

    /// Pausing leaves the rest buffered; calling readFrames again delivers it from the buffer, then
    /// what arrives later.
    @Test func pausingThenResumingDeliversEveryFrameOnceInOrder() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let frames = Self.lp4()
        let received = EventRecorder<String>()
        let delivered = LockedValue(0)
        server.readFrames(using: frames, pauseFrames: { _ in delivered.withLock { $0 } == 2 }) { _, frame in
            delivered.withLock { $0 += 1 }
            received.record(String(decoding: frame, as: UTF8.self))
        }
        // Four frames and half of a fifth, in one write.
        pair.client.write(
            Self.lengthPrefixed(["a", "b", "c", "d"]) + Data([0, 0, 0, 2, 101]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next(2) == ["a", "b"])
        try await waitUntil("the rest stays buffered") { server.bufferedReadBytes == 10 + 5 }
        #expect(received.pending.isEmpty)
        server.readFrames(using: frames) { _, frame in received.record(String(decoding: frame, as: UTF8.self)) }
        #expect(try await received.next(2) == ["c", "d"])
        pair.client.write(Data([102]) + Self.lengthPrefixed(["g"]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next(2) == ["ef", "g"])
    }

    /// One frame per read, each completion queuing the next read: frames glued in one write still
    /// come one per read, in order.
    @Test func readFrameChainedFromItsCompletionTakesGluedFramesOneAtATime() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let frames = Self.lp4()
        let received = EventRecorder<String>()
        let count = LockedValue(0)
        @Sendable func next() {
            server.readFrame(using: frames, withTimeout: -1) { result in
                guard case .success(let frame) = result else { return received.record("\(result)") }
                // The fourth frame's completion queues a plain read instead: it takes the bytes after it.
                if count.withLock({
                    $0 += 1; return $0
                }) < 4 {
                    next()
                } else {
                    server.readData(toLength: 2, withTimeout: -1, tag: 7)
                }
                received.record(String(decoding: frame, as: UTF8.self))
            }
        }
        next()
        pair.client.write(Self.lengthPrefixed(["x", "yy", "zzz", "w"]) + Data("ok".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next(4) == ["x", "yy", "zzz", "w"])
        #expect(try await pair.serverDelegate.events.first { $0.readData != nil } == .read(Data("ok".utf8), tag: 7))
    }

    @Test func readFrameTimesOutWithItsTag() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let result = EventRecorder<SocketError?>()
        server.readFrame(using: Self.lp4(), withTimeout: 0.05, tag: 42) { result.record($0.failure) }
        pair.client.write(Data([0, 0, 0, 9, 1]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await result.next() == .readTimeout(tag: 42))
        #expect(try await pair.serverDelegate.events.first { $0.disconnectError != nil } == .disconnected(.readTimeout(tag: 42)))
    }

    /// After the connection ended with an error, the delegate was handed the unread bytes
    /// (socketWillDisconnect); a one-frame read then must not deliver them a second time.
    @Test func readFrameAfterAnErrorEndIsNotConnected() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        pair.client.write(Self.lengthPrefixed(["late"]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        try await waitUntil("the frame is buffered") { server.bufferedReadBytes == 8 }
        pair.client.lingerSeconds = 0
        pair.client.disconnect()  // an RST
        let events = try await pair.serverDelegate.events.next(2)
        #expect(
            events == [
                .willDisconnect(unread: Self.lengthPrefixed(["late"]), unsentTags: []),
                .disconnected(.connectionReset(operation: "read", errno: ECONNRESET))
            ])
        let result = EventRecorder<String>()
        server.readFrame(using: Self.lp4(), withTimeout: -1) { outcome in
            switch outcome {
            case .success(let frame): result.record("frame \(String(decoding: frame, as: UTF8.self))")
            case .failure(let error): result.record("\(error)")
            }
        }
        #expect(try await result.next() == "\(SocketError.notConnected)")
    }

    /// Delimited lines of exactly the maximum (CR LF included) arrive one byte at a time; one byte more
    /// before the delimiter is refused with the decoder's error, not the socket's read limit.
    @Test func delimiterFramesAtTheMaximumFedOneByteAtATime() async throws {
        let (listener, client, server) = try await SocketFrameReadingTests.asyncPair()
        let decoder = DelimiterBasedFrameDecoder.lines(maxFrameLength: 8)
        #expect(decoder.maximumFrameLength == 10)
        let wire = Array("12345678\r\n1234567\n123456789\n".utf8)
        let reader = Task {
            var lines: [String] = []
            var iterator = server.frames(decodedWith: decoder).makeAsyncIterator()
            do {
                while let line = try await iterator.next() { lines.append(String(decoding: line, as: UTF8.self)) }
                lines.append("end")
            } catch {
                lines.append("\(error)")
            }
            return lines
        }
        for byte in wire {
            try await client.write(Data([byte]))
        }
        let lines = await reader.value
        #expect(lines == ["12345678", "1234567", "\(FramingError.frameTooLong(length: 9, maxFrameLength: 8))"])
        await client.close()
        await server.close()
        await listener.close()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
