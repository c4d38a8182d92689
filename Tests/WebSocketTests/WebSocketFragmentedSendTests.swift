import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// A message longer than the frame limit goes out as fragments of that size (RFC 6455 §5.4), so our
/// client reaches our server with any message up to the message limit. Regression: a message of 16–64
/// MiB went out as one frame, which our own receiver (frame limit 16 MiB) refused with 1009.
@Suite struct WebSocketFragmentedSendTests {
    typealias Handler = WebSocketProtocolHandler

    /// The frames `outputs` write, decoded as `role`'s peer receives them.
    static func frames(_ outputs: [Handler.Output], to role: WebSocketRole, limit: Int) throws -> [WebSocketFrame] {
        var buffer = FrameBuffer()
        for case .write(let bytes) in outputs { buffer.append(contentsOf: Array(bytes)) }
        var decoder = WebSocketFrameDecoder(role: role, maxFrameSize: limit, allowedReservedBits: .rsv1)
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.decode(&buffer) { frames.append(frame) }
        return frames
    }

    /// What `receiver` makes of `outputs`' bytes.
    static func received(_ outputs: [Handler.Output], by receiver: inout Handler) -> [Handler.Output] {
        var buffer = FrameBuffer()
        for case .write(let bytes) in outputs { buffer.append(contentsOf: Array(bytes)) }
        return receiver.receive(&buffer)
    }

    static let payload = Data((0..<2_500).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 3) })

    @Test func aClientsMessageOverTheFrameLimitGoesOutInFragmentsTheServerReassembles() throws {
        var client = Handler(role: .client, maxFrameSize: 1_000, keepAlive: nil)
        var server = Handler(role: .server, maxFrameSize: 1_000, keepAlive: nil)
        let outputs = try client.send(.binary(Self.payload))
        let frames = try Self.frames(outputs, to: .server, limit: 1_000)
        #expect(frames.map(\.opcode) == [.binary, .continuation, .continuation])
        #expect(frames.map(\.fin) == [false, false, true])
        #expect(frames.map(\.payload.count) == [1_000, 1_000, 500])
        #expect(Self.received(outputs, by: &server) == [.message(.binary(Self.payload))])
        // At the limit: one frame.
        #expect(try Self.frames(client.send(.binary(Self.payload.prefix(1_000))), to: .server, limit: 1_000).map(\.fin) == [true])
    }

    @Test func aServersTextOverTheFrameLimitGoesOutInFragmentsNotByTheOneFramePath() throws {
        var server = Handler(role: .server, maxFrameSize: 1_000, keepAlive: nil)
        var client = Handler(role: .client, maxFrameSize: 1_000, keepAlive: nil)
        let text = "a" + String(repeating: "é", count: 600)  // 1,201 bytes: the split falls inside an "é"
        #expect(try server.plainDataFrame(.text(text)) == nil)
        #expect(try server.plainDataFrame(.text("short"))?.payload == Data("short".utf8))
        let outputs = try server.send(.text(text))
        #expect(try Self.frames(outputs, to: .client, limit: 1_000).map(\.payload.count) == [1_000, 201])
        #expect(Self.received(outputs, by: &client) == [.message(.text(text))])
    }

    @Test func aCompressedMessageOverTheFrameLimitCarriesRSV1OnItsFirstFragmentOnly() throws {
        var client = Handler(role: .client, maxFrameSize: 1_000, keepAlive: nil)
        var server = Handler(role: .server, maxFrameSize: 1_000, keepAlive: nil)
        client.enablePerMessageDeflate(PerMessageDeflate.Agreement())
        server.enablePerMessageDeflate(PerMessageDeflate.Agreement())
        // Bytes that do not compress: more than 2,500 once deflated.
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<2_500).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let outputs = try client.send(.binary(noise))
        let frames = try Self.frames(outputs, to: .server, limit: 1_000)
        #expect(frames.count == 3)
        #expect(frames.map(\.rsv1) == [true, false, false])
        #expect(frames.map(\.opcode) == [.binary, .continuation, .continuation])
        #expect(Self.received(outputs, by: &server) == [.message(.binary(noise))])
    }

    @Test(.timeLimit(.minutes(1))) func ourClientSendsOurServerAMessageOverSixteenMebibytesAtTheDefaultLimits() async throws {
        let echo = EchoListenerDelegate()
        let listener = try echo.start()
        defer { listener.stop() }
        let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/")
        let message = Data(repeating: 0x5A, count: WebSocketFrameDecoder.defaultMaxFrameSize + 1)
        try await connection.send(.binary(message))
        var iterator = connection.messages.makeAsyncIterator()
        let echoed = await iterator.next()
        #expect(echoed == .binary(message))
        #expect(await connection.close().code == .normalClosure)
    }
}
