import AsyncSocket
import Foundation
import SocketFraming
import Testing
import TestSupport

/// Codecs on real sockets: frames read straight from a TCPSocket (delegate style) and from a
/// TCPConnection (async style), however the bytes arrive.
@Suite struct SocketFrameReadingTests {
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
        let pair = try LoopbackPair(onFrame: { socket, _, tag in
            socket.readFrame(using: frames, withTimeout: 5, tag: tag + 1)
        })
        defer { pair.close() }
        let server = try await pair.connect()
        server.readFrame(using: frames, withTimeout: 5, tag: 1)
        let bytes = Self.lengthPrefixed(["one", "two", "", "three"])
        // Two frames glued, then the rest one byte at a time.
        pair.client.write(bytes.prefix(14), withTimeout: 5, tag: 0)
        for index in 14..<bytes.count {
            pair.client.write(bytes.subdata(in: index..<index + 1), withTimeout: 5, tag: 0)
        }
        let events = try await pair.serverDelegate.events.next(4)
        #expect(events.map(\.description) == [
            #"frame("one", tag: 1)"#, #"frame("two", tag: 2)"#, #"frame("", tag: 3)"#, #"frame("three", tag: 4)"#,
        ])
    }

    @Test func structuredFramesAndAnEncoderOnTheWriteSide() async throws {
        let frames = SocketFrameDecoder(SevenByteHeaderFrameDecoder())
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        let encoder = SevenByteHeaderFrameEncoder()
        let long = Data(String(repeating: "compress me ", count: 200).utf8)
        try pair.client.writeFrame(SevenByteHeaderFrame(version: 1, functionCode: 7, body: Data("{}".utf8)), using: encoder, withTimeout: 5, tag: 1)
        try pair.client.writeFrame(SevenByteHeaderFrame(version: 1, functionCode: 8, isCompressed: true, body: long), using: encoder, withTimeout: 5, tag: 2)
        server.readFrame(using: frames, withTimeout: 5, tag: 1)
        server.readFrame(using: frames, withTimeout: 5, tag: 2)
        let events = try await pair.serverDelegate.events.next(2)
        guard case .frame(let first as SevenByteHeaderFrame, 1) = events[0],
              case .frame(let second as SevenByteHeaderFrame, 2) = events[1] else {
            Issue.record("got \(events)")
            return
        }
        #expect(first == SevenByteHeaderFrame(version: 1, functionCode: 7, body: Data("{}".utf8)))
        #expect(second == SevenByteHeaderFrame(version: 1, functionCode: 8, isCompressed: true, body: long))
    }

    /// Regression: a frame larger than `maxBufferedReadBytes` (1 MiB) stalled when reading paused at
    /// 1 MiB, even with a larger `maxLength` given.
    @Test func aFrameLargerThanTheReadBufferLimitArrivesWithinItsMaxLength() async throws {
        let bodyLength = 3 * TCPSocket.maxBufferedReadBytes + 5
        let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 4 + bodyLength))
        let pair = try LoopbackPair()
        defer { pair.close() }
        let server = try await pair.connect()
        server.readFrame(using: frames, withTimeout: 30, maxLength: UInt(4 + bodyLength), tag: 7)
        let body = Data((0..<bodyLength).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var bytes = Data(withUnsafeBytes(of: UInt32(bodyLength).bigEndian, Array.init))
        bytes.append(body)
        pair.client.write(bytes, withTimeout: 30, tag: 0)
        let events = try await pair.serverDelegate.events.next(1)
        guard case .frame(let frame as Data, 7) = events[0] else {
            Issue.record("got \(events)")
            return
        }
        #expect(frame.count == bodyLength)
        #expect(frame == body)
    }

    @Test func undecodableFrameClosesOnlyThatConnectionAfterTheFramesBeforeIt() async throws {
        let frames = SocketFrameDecoder(LengthFieldBasedFrameDecoder.lengthPrefixed(maxFrameLength: 100))
        let pair = try LoopbackPair(onFrame: { socket, _, tag in
            socket.readFrame(using: frames, withTimeout: 5, tag: tag + 1)
        })
        defer { pair.close() }
        let server = try await pair.connect()
        server.readFrame(using: frames, withTimeout: 5, tag: 1)
        var bytes = Self.lengthPrefixed(["fine", "also fine"])
        bytes.append(contentsOf: [0, 0, 1, 0])  // a 256-byte frame, over the maximum
        pair.client.write(bytes, withTimeout: 5, tag: 0)
        let events = try await pair.serverDelegate.events.next(4)
        #expect(events.map(\.description) == [
            #"frame("fine", tag: 1)"#, #"frame("also fine", tag: 2)"#,
            #"willDisconnect(unread: "\0\0\u{01}\0", unsentTags: [])"#,
            "disconnected(bad frame: frame of 260 bytes exceeds the maximum frame length of 100 bytes)",
        ])
        #expect(frames.error == .frameTooLong(length: 260, maxFrameLength: 100))
    }

    /// The articles' two-step pattern: read the header to its length, then the body to the length the
    /// header gives (article 003's seven-byte header), on plain reads with no codec.
    @Test func articlesTwoStepHeaderThenBodyPattern() async throws {
        let pair = try LoopbackPair(onServerRead: { socket, data, tag in
            if tag == 1, data.count == SevenByteHeaderFrame.headerLength {
                let bodyLength = UInt(data[5]) << 8 | UInt(data[6])
                socket.readData(toLength: bodyLength, withTimeout: 5, tag: 2)
            } else {
                socket.readData(toLength: UInt(SevenByteHeaderFrame.headerLength), withTimeout: 5, tag: 1)
            }
        })
        defer { pair.close() }
        let server = try await pair.connect()
        server.readData(toLength: UInt(SevenByteHeaderFrame.headerLength), withTimeout: 5, tag: 1)
        let encoder = SevenByteHeaderFrameEncoder()
        var bytes = try encoder.encode(SevenByteHeaderFrame(version: 1, functionCode: 1, body: Data(#"{"a":1}"#.utf8)))
        bytes.append(try encoder.encode(SevenByteHeaderFrame(version: 1, functionCode: 2, body: Data(#"{"b":2}"#.utf8))))
        pair.client.write(bytes, withTimeout: 5, tag: 0)
        let events = try await pair.serverDelegate.events.next(4)
        #expect(events.map(\.description) == [
            #"read("\0\u{01}\0\u{01}\0\0\u{07}", tag: 1)"#, #"read("{\"a\":1}", tag: 2)"#,
            #"read("\0\u{01}\0\u{02}\0\0\u{07}", tag: 1)"#, #"read("{\"b\":2}", tag: 2)"#,
        ])
    }

    @Test func asyncFramesAndSend() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        var iterator = listener.makeAsyncIterator()
        let server = try #require(try await iterator.next())
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
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(toHost: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        var iterator = listener.makeAsyncIterator()
        let server = try #require(try await iterator.next())
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
}
