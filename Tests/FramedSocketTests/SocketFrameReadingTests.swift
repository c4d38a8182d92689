import AsyncSocket
import FramedSocket
import Foundation
import SocketFraming
import Testing
import TestSupport

/// Codecs on real sockets: frames read straight from a TCPSocket (delegate style) and from a
/// TCPConnection (async style), however the bytes arrive.
@Suite struct SocketFrameReadingTests {
    /// A listener on 127.0.0.1, a client connected to it, and the server's side of the connection.
    static func asyncPair() async throws -> (TCPListener, TCPConnection, TCPConnection) {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        var iterator = listener.makeAsyncIterator()
        let server = try #require(try await iterator.next())
        return (listener, client, server)
    }

    static func lengthPrefixed(_ bodies: [String]) -> Data {
        var bytes = Data()
        for body in bodies {
            bytes.append(contentsOf: withUnsafeBytes(of: UInt32(body.utf8.count).bigEndian, Array.init))
            bytes.append(contentsOf: body.utf8)
        }
        return bytes
    }

    @Test func framesReadWithACodecArriveWholeHoweverTheBytesAreCut() async throws {
        let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 16))
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<String>()
        server.readFrames(using: frames) { _, frame in received.record(String(decoding: frame, as: UTF8.self)) }
        let bytes = Self.lengthPrefixed(["one", "two", "", "three"])
        // Two frames glued, then the rest one byte at a time.
        pair.client.write(bytes.prefix(14), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        for index in 14..<bytes.count {
            pair.client.write(bytes.subdata(in: index..<index + 1), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        }
        #expect(try await received.next(4) == ["one", "two", "", "three"])
    }

    @Test func oneFrameAtATimeInOrderWithTheSocketsOtherReads() async throws {
        let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1 << 16))
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<String>()
        server.readFrame(using: frames, withTimeout: -1) { received.record("\($0.map { String(decoding: $0, as: UTF8.self) })") }
        server.readData(toLength: 3, withTimeout: -1, tag: 9)
        server.readFrame(using: frames, withTimeout: -1) { received.record("\($0.map { String(decoding: $0, as: UTF8.self) })") }
        var bytes = Self.lengthPrefixed(["first"])
        bytes.append(Data("raw".utf8))
        bytes.append(Self.lengthPrefixed(["second"]))
        pair.client.write(bytes, withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next(2) == [#"success("first")"#, #"success("second")"#])
        #expect(try await pair.serverDelegate.events.next().description == #"read("raw", tag: 9)"#)
    }

    @Test func structuredFramesAndAnEncoderOnTheWriteSide() async throws {
        let frames = SocketFrameDecoder(SevenByteHeaderFrameDecoder())
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let encoder = SevenByteHeaderFrameEncoder()
        let long = Data(String(repeating: "compress me ", count: 200).utf8)
        try pair.client.writeFrame(
            SevenByteHeaderFrame(version: 1, functionCode: 7, body: Data("{}".utf8)), using: encoder,
            withTimeout: TestTiming.hangTimeout(5), tag: 1)
        try pair.client.writeFrame(
            SevenByteHeaderFrame(version: 1, functionCode: 8, isCompressed: true, body: long), using: encoder,
            withTimeout: TestTiming.hangTimeout(5), tag: 2)
        let received = EventRecorder<SevenByteHeaderFrame>()
        server.readFrames(using: frames) { _, frame in received.record(frame) }
        #expect(
            try await received.next(2) == [
                SevenByteHeaderFrame(version: 1, functionCode: 7, body: Data("{}".utf8)),
                SevenByteHeaderFrame(version: 1, functionCode: 8, isCompressed: true, body: long)
            ])
    }

    /// Regression: a frame larger than `maxBufferedReadBytes` (1 MiB) stalled when reading paused at
    /// 1 MiB, even with a larger maximum frame length given: the decoder's maximum is the read's limit.
    @Test(.cpuBound) func aFrameLargerThanTheReadBufferLimitArrivesWithinItsMaxLength() async throws {
        let bodyLength = 3 * TCPSocket.maxBufferedReadBytes + 5
        let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 4 + bodyLength))
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<Data>()
        server.readFrame(using: frames, withTimeout: -1) { result in
            if case .success(let frame) = result { received.record(frame) }
        }
        let body = patternBytes(bodyLength, multiplier: 31)
        var bytes = Data(withUnsafeBytes(of: UInt32(bodyLength).bigEndian, Array.init))
        bytes.append(body)
        pair.client.write(bytes, withTimeout: TestTiming.hangTimeout(30), tag: 0)
        let frame = try await received.next()
        #expect(frame.count == bodyLength)
        #expect(frame == body)
    }

    @Test func undecodableFrameClosesOnlyThatConnectionAfterTheFramesBeforeIt() async throws {
        let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 100))
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<String>()
        server.readFrames(using: frames) { _, frame in received.record(String(decoding: frame, as: UTF8.self)) }
        var bytes = Self.lengthPrefixed(["fine", "also fine"])
        bytes.append(contentsOf: [0, 0, 1, 0])  // a 256-byte frame, over the maximum
        pair.client.write(bytes, withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next(2) == ["fine", "also fine"])
        let events = try await pair.serverDelegate.events.next(2)
        #expect(
            events.map(\.description) == [
                #"willDisconnect(unread: "\0\0\u{01}\0", unsentTags: [])"#,
                "disconnected(decoding failed: frame of 260 bytes exceeds the maximum frame length of 100 bytes)"
            ])
        guard case .disconnected(.decodingFailed(let failure)?) = events[1] else {
            Issue.record("got \(events[1])")
            return
        }
        #expect(failure.underlying as? FramingError == .frameTooLong(length: 260, maxFrameLength: 100))
    }

    /// Frames handed over in place, one call per frame, and whole bursts as one run.
    @Test func slicedFramesAreBorrowedOnePerCallOrAsOneRunPerBurst() async throws {
        let lp4 = LengthFieldBasedFrameDecoder(maxFrameLength: 100, lengthFieldLength: 4, initialBytesToStrip: 0)
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let perFrame = EventRecorder<[UInt8]>()
        server.readFrames(slicedBy: lp4) { _, frame in perFrame.record(Array(frame)) }
        pair.client.write(Self.lengthPrefixed(["ab", "c"]) + Data([0, 0]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await perFrame.next(2) == [[0, 0, 0, 2, 97, 98], [0, 0, 0, 1, 99]])
        pair.client.write(Data([0, 1, 100]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await perFrame.next() == [0, 0, 0, 1, 100])

        let clientSide = try LoopbackPair()
        defer { clientSide.close() }
        let runServer = try await clientSide.connect()
        let runs = EventRecorder<[UInt8]>()
        runServer.readFrameRuns(slicedBy: lp4) { _, frames in runs.record(Array(frames)) }
        clientSide.client.write(Self.lengthPrefixed(["ab", "c"]) + Data([0, 0]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await runs.next() == [0, 0, 0, 2, 97, 98, 0, 0, 0, 1, 99])
        clientSide.client.write(Data([0, 1, 100]), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await runs.next() == [0, 0, 0, 1, 100])
    }

    /// The articles' two-step pattern: read the header to its length, then the body to the length the
    /// header gives (article 003's seven-byte header), on plain reads with no codec.
    @Test func articlesTwoStepHeaderThenBodyPattern() async throws {
        let pair = try LoopbackPair(onServerRead: { socket, data, tag in
            if tag == 1, data.count == SevenByteHeaderFrame.headerLength {
                let bodyLength = UInt(data[5]) << 8 | UInt(data[6])
                socket.readData(toLength: bodyLength, withTimeout: -1, tag: 2)
            } else {
                socket.readData(toLength: UInt(SevenByteHeaderFrame.headerLength), withTimeout: TestTiming.hangTimeout(5), tag: 1)
            }
        })
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: UInt(SevenByteHeaderFrame.headerLength), withTimeout: TestTiming.hangTimeout(5), tag: 1)
        let encoder = SevenByteHeaderFrameEncoder()
        var bytes = try encoder.encode(SevenByteHeaderFrame(version: 1, functionCode: 1, body: Data(#"{"a":1}"#.utf8)))
        bytes.append(try encoder.encode(SevenByteHeaderFrame(version: 1, functionCode: 2, body: Data(#"{"b":2}"#.utf8))))
        pair.client.write(bytes, withTimeout: TestTiming.hangTimeout(5), tag: 0)
        let events = try await pair.serverDelegate.events.next(4)
        #expect(
            events.map(\.description) == [
                #"read("\0\u{01}\0\u{01}\0\0\u{07}", tag: 1)"#, #"read("{\"a\":1}", tag: 2)"#,
                #"read("\0\u{01}\0\u{02}\0\0\u{07}", tag: 1)"#, #"read("{\"b\":2}", tag: 2)"#
            ])
    }

    @Test func asyncFramesAndSend() async throws {
        let (listener, client, server) = try await Self.asyncPair()
        let encoder = LengthFieldPrepender(lengthFieldLength: 4)
        for body in ["alpha", "beta", "gamma"] { try await client.send(Data(body.utf8), encodedWith: encoder) }
        await client.closeWrite()
        var received: [String] = []
        for try await frame in server.frames(decodedWith: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1024)) {
            received.append(String(decoding: frame, as: UTF8.self))
        }
        #expect(received == ["alpha", "beta", "gamma"])
        await server.close()
        await client.close()
        await listener.close()
    }

    @Test func asyncFramesThrowTheCodecsErrorForAMalformedFrame() async throws {
        let (listener, client, server) = try await Self.asyncPair()
        try await client.write(Self.lengthPrefixed(["ok"]) + Data([0xFF, 0, 0, 0]))
        var received: [String] = []
        do {
            for try await frame in server.frames(decodedWith: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1024)) {
                received.append(String(decoding: frame, as: UTF8.self))
            }
            Issue.record("the stream should have thrown")
        } catch let error as FramingError {
            #expect(error == .frameTooLong(length: 4_278_190_084, maxFrameLength: 1024))
        }
        #expect(received == ["ok"])
        await client.close()
        await listener.close()
    }

    /// The sequence reads only when asked, and leaving it early leaves a partial frame's bytes readable.
    @Test func asyncFramesReadOnlyWhenAskedAndHandBackAPartialFrame() async throws {
        let (listener, client, server) = try await Self.asyncPair()
        try await client.write(Self.lengthPrefixed(["one", "two"]) + Data([0, 0, 0, 9, 65]))
        var frames = server.frames(decodedWith: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1024)).makeAsyncIterator()
        #expect(try await frames.next().map { String(decoding: $0, as: UTF8.self) } == "one")
        // Nothing more is taken until asked: "two" and the partial frame are still the connection's.
        let rest = try await server.read(exactly: 7 + 5)
        #expect(Array(rest) == [0, 0, 0, 3, 116, 119, 111, 0, 0, 0, 9, 65])
        await client.close()
        await server.close()
        await listener.close()
    }

    @Test func asyncFramesEndingMidFrameThrowTruncated() async throws {
        let (listener, client, server) = try await Self.asyncPair()
        try await client.write(Self.lengthPrefixed(["ok"]) + Data([0, 0, 0, 5, 1, 2]))
        await client.close()
        var received: [String] = []
        do {
            for try await frame in server.frames(decodedWith: LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 1024)) {
                received.append(String(decoding: frame, as: UTF8.self))
            }
            Issue.record("the stream should have thrown")
        } catch let error as FramingError {
            #expect(error == .truncatedFrame(bufferedBytes: 6))
        }
        #expect(received == ["ok"])
        await server.close()
        await listener.close()
    }

    /// Regression (issue 9): an eight-byte-header frame with a body of the decoder's default maximum
    /// (1,048,576 bytes) arrived whole in one piece but failed with `readMaxedOut(1048576)` when its
    /// last bytes came later. The read's limit is now the decoder's `maximumFrameLength`.
    @Test(.cpuBound, arguments: [4, 8])
    func aMaximumSizeFrameArrivesHoweverTCPSplitsIt(lastBytes: Int) async throws {
        let decoder = EightByteHeaderFrameDecoder()
        let body = patternBytes(decoder.maxBodyLength, multiplier: 7)
        let wire = try EightByteHeaderFrameEncoder().encode(EightByteHeaderFrame(serviceID: 42, body: body))
        #expect(wire.count == decoder.maximumFrameLength)
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<EightByteHeaderFrame>()
        server.readFrames(using: SocketFrameDecoder(decoder)) { _, frame in received.record(frame) }
        pair.client.write(wire.prefix(wire.count - lastBytes), withTimeout: TestTiming.hangTimeout(30), tag: 0)
        try await waitUntil("all but the last bytes are buffered") { server.bufferedReadBytes == wire.count - lastBytes }
        pair.client.write(wire.suffix(lastBytes), withTimeout: TestTiming.hangTimeout(30), tag: 0)
        #expect(try await received.next() == EightByteHeaderFrame(serviceID: 42, body: body))
        #expect(received.pending.isEmpty)
    }

    /// One byte more than the maximum is refused with the decoder's typed error, from its header.
    @Test func oneByteOverTheMaximumIsRefusedFromTheHeader() async throws {
        let (listener, client, server) = try await Self.asyncPair()
        let decoder = EightByteHeaderFrameDecoder(maxBodyLength: 1000)
        let header = Data([0, 0, 0, 1, 0, 0, 0x03, 0xE9])  // service 1, a body of 1,001 bytes
        try await client.write(header)
        do {
            for try await frame in server.frames(decodedWith: decoder) { Issue.record("got \(frame)") }
            Issue.record("the stream should have thrown")
        } catch let error as FramingError {
            #expect(error == .frameTooLong(length: 1001, maxFrameLength: 1000))
        }
        await client.close()
        await server.close()
        await listener.close()
    }

    /// Frame reads belong to the adapter, not the delegate: a partial frame reports no read progress
    /// to the delegate (which would see `didReadPartialDataOfLength` for a tag it never queued).
    @Test func framesReportNoReadProgressToTheDelegate() async throws {
        let pair = try LoopbackPair(recordsProgress: true)
        defer { pair.close() }
        let server = try await pair.connect()
        let received = EventRecorder<String>()
        server.readFrames(using: SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 100))) { _, frame in
            received.record(String(decoding: frame, as: UTF8.self))
        }
        let bytes = Self.lengthPrefixed(["partial"])
        pair.client.write(bytes.prefix(6), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        try await waitUntil("the first bytes are buffered") { server.bufferedReadBytes == 6 }
        pair.client.write(bytes.suffix(from: 6), withTimeout: TestTiming.hangTimeout(5), tag: 0)
        #expect(try await received.next() == "partial")
        // Delegate events arrive in order: a progress report would come before this write's.
        server.write(Data("ok".utf8), withTimeout: TestTiming.hangTimeout(5), tag: 3)
        #expect(try await pair.serverDelegate.events.next().description == "wrote(tag: 3)")
    }
}
