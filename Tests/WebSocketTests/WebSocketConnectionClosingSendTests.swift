import AsyncSocket
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// ``WebSocketConnection/send(_:)`` once closing has begun: its documentation promises
/// ``WebSocketProtocolHandler/SendError/closing`` "once the connection is closing or closed" (RFC 6455
/// §5.5.1: no data frame after a Close). Until the fix it threw only once the end had reached the
/// async face; a send while the closing handshake was under way returned normally and its message
/// was dropped, unsent and unreported. Each test holds the connection in one closing state with a
/// plain TCP server that does only what the test asks.
@Suite(.cpuBound) struct WebSocketConnectionClosingSendTests {
    /// Every kind of message `send` takes.
    static let lateMessages: [WebSocketMessage] = [
        .text("late"), .binary(Data([1, 2])), .ping(Data([3])), .pong(Data([4])),
        .close(WebSocketClosePayload(code: .goingAway, reason: "again"))
    ]

    /// The next read of `tag` on the plain server.
    static func read(_ recorder: RecordingDelegate, tag: Int) async throws -> Data {
        let event = try await recorder.events.first(within: TestTiming.hangLimit(.seconds(10))) {
            if case .read(_, tag: tag) = $0 { return true }
            return false
        }
        guard case .read(let data, _) = event else { throw RawPeerError("no read \(tag): \(event)") }
        return data
    }

    /// This side's Close is out and the server has not answered: every send throws `.closing`.
    @Test func aSendAfterThisSidesCloseThrowsClosing() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "closing-send")
        defer { group.shutdown() }
        let pair = try LoopbackListener(group: group)
        defer { pair.close() }
        let (connection, server, recorder) = try await WebSocketStalledPeerTests.connect(through: pair, group: group)
        let closing = Task { await connection.close(code: .normalClosure, reason: "done") }
        // The client's Close (masked: 6 bytes of header and key, then 1000 and "done") has arrived.
        server.readData(toLength: 12, withTimeout: TestTiming.hangTimeout(10), tag: 3)
        #expect(Array(try await Self.read(recorder, tag: 3).prefix(2)) == [0x88, 0x86])
        for message in Self.lateMessages {
            await #expect(throws: WebSocketProtocolHandler.SendError.closing) { try await connection.send(message) }
        }
        server.disconnect()
        let result = await closing.value
        #expect(result.code == .abnormalClosure && !result.wasClean)
    }

    /// The server's Close arrived and was answered; the client waits for the server's TCP close:
    /// every send throws `.closing`, and the end is the server's code, clean.
    @Test func aSendAfterThePeersCloseThrowsClosing() async throws {
        let group = EventLoopGroup(numberOfThreads: 1, name: "closing-send")
        defer { group.shutdown() }
        let pair = try LoopbackListener(group: group)
        defer { pair.close() }
        let (connection, server, recorder) = try await WebSocketStalledPeerTests.connect(through: pair, group: group)
        server.write(Data([0x88, 0x02, 0x03, 0xE8]), withTimeout: -1, tag: 3)  // Close 1000, unmasked
        // The client's answer (masked: 6 bytes of header and key, then 1000).
        server.readData(toLength: 8, withTimeout: TestTiming.hangTimeout(10), tag: 4)
        #expect(Array(try await Self.read(recorder, tag: 4).prefix(2)) == [0x88, 0x82])
        for message in Self.lateMessages {
            await #expect(throws: WebSocketProtocolHandler.SendError.closing) { try await connection.send(message) }
        }
        server.disconnect()
        #expect(await connection.closeResult == WebSocketCloseResult(code: .normalClosure, reason: "", wasClean: true))
    }
}
