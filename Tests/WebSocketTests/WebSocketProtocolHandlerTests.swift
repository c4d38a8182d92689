import Foundation
import SocketFraming
import Testing
import WebSocket

/// A connection's protocol after the upgrade, driven with bytes and timers, no socket.
@Suite struct WebSocketProtocolHandlerTests {
    typealias Handler = WebSocketProtocolHandler

    static func feed(_ handler: inout Handler, _ bytes: [UInt8]) -> [Handler.Output] {
        var buffer = FrameBuffer()
        buffer.append(contentsOf: bytes)
        return handler.receive(&buffer)
    }

    /// A client's frame, masked with a random key, as a server receives it.
    static func fromClient(_ opcode: WebSocketOpcode, _ payload: Data) throws -> [UInt8] {
        Array(try WebSocketFrameEncoder(role: .client).encode(WebSocketFrame(opcode: opcode, payload: payload)))
    }

    @Test func aServerHandsOnTheRFCsMaskedHelloAndAnswersAPingWithItsPayload() throws {
        var handler = Handler(role: .server, keepAlive: nil)
        #expect(Self.feed(&handler, [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]) == [.message(.text("Hello"))])
        #expect(
            Self.feed(&handler, try Self.fromClient(.ping, Data("Hello".utf8))) == [
                .write(Data([0x8A, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]))
            ])
        #expect(try handler.send(.binary(Data([1, 2, 3]))) == [.write(Data([0x82, 0x03, 1, 2, 3]))])
    }

    @Test func thePeersCloseIsEchoedTheServerClosesTCPAndTheEndIsClean() throws {
        var handler = Handler(role: .server, keepAlive: nil)
        let close = try Self.fromClient(.close, Data([0x0F, 0xA0]) + Data("bye".utf8))  // 4000
        #expect(Self.feed(&handler, close) == [.write(Data([0x88, 0x02, 0x0F, 0xA0])), .closeTransport(afterWriting: true)])
        #expect(throws: Handler.SendError.closing) { try handler.send(.text("late")) }
        #expect(
            handler.transportClosed() == [
                .closed(WebSocketCloseResult(code: WebSocketCloseCode(rawValue: 4000), reason: "bye", wasClean: true))
            ])
    }

    @Test func invalidUTF8FailsTheConnectionWith1007AndNothingAfterItIsRead() throws {
        var handler = Handler(role: .server, keepAlive: nil)
        var bytes = try Self.fromClient(.text, Data([0x68, 0xC0, 0xAF]))  // an overlong "/"
        bytes += try Self.fromClient(.text, Data("after".utf8))
        let outputs = Self.feed(&handler, bytes)
        let reason = WebSocketProtocolError.invalidUTF8(offset: 1).description
        #expect(
            outputs == [
                .write(Data([0x88, UInt8(2 + reason.utf8.count), 0x03, 0xEF]) + Data(reason.utf8)), .closeTransport(afterWriting: true),
                .closed(WebSocketCloseResult(code: .invalidPayloadData, reason: reason, wasClean: false))
            ])
    }

    @Test func keepAlivePingsAndFailsWith1011WithoutAPong() throws {
        var handler = Handler(role: .server, keepAlive: WebSocketKeepAlive(interval: .seconds(20), timeout: .seconds(20)))
        #expect(handler.start() == [.startKeepAliveTimer(.seconds(20))])
        #expect(handler.keepAliveTimerFired() == [.write(Data([0x89, 0x04, 0, 0, 0, 1])), .startKeepAliveTimer(.seconds(20))])
        #expect(
            Self.feed(&handler, try Self.fromClient(.pong, Data([0, 0, 0, 1]))) == [
                .pong(Data([0, 0, 0, 1])), .startKeepAliveTimer(.seconds(20))
            ])
        _ = handler.keepAliveTimerFired()
        let reason = "keepalive ping timeout"
        #expect(
            handler.keepAliveTimerFired() == [
                .write(Data([0x88, UInt8(2 + reason.utf8.count), 0x03, 0xF3]) + Data(reason.utf8)), .closeTransport(afterWriting: true),
                .closed(WebSocketCloseResult(code: .internalError, reason: reason, wasClean: false))
            ])
        #expect(handler.keepAliveTimerFired() == [])
    }

    @Test func aClientMasksWhatItSendsAndClosesFirstThenWaitsForTheServer() throws {
        var handler = Handler(role: .client, keepAlive: nil)
        guard case .write(let bytes)? = try handler.send(.text("Hello")).first else {
            Issue.record("no write")
            return
        }
        #expect(bytes.count == 11 && bytes[0] == 0x81 && bytes[1] == 0x85)  // masked: the mask bit and a 4-byte key
        var server = WebSocketFrameDecoder(role: .server)
        var buffer = FrameBuffer()
        buffer.append(bytes)
        #expect(try server.decode(&buffer)?.payload == Data("Hello".utf8))
        let close = handler.close(code: .normalClosure, reason: "done")
        #expect(close.count == 2 && close.last == .startCloseTimer(.seconds(10)))
        #expect(Self.feed(&handler, [0x88, 0x02, 0x03, 0xE8]) == [])  // the server's echo: wait for its TCP close
        #expect(
            handler.transportClosed() == [
                .cancelCloseTimer, .closed(WebSocketCloseResult(code: .normalClosure, reason: "", wasClean: true))
            ])
    }
}

/// Keep-alive once closing has begun: no Ping goes out after this side's Close (RFC 6455 §1.4, §5.5.1;
/// the handler's documentation: "nothing can be sent after this side's"), and an unanswered Ping does
/// not turn the close timeout's 1006 into a 1011. Until the fix the keep-alive timer went on pinging
/// through the closing handshake.
@Suite struct WebSocketKeepAliveWhileClosingTests {
    typealias Handler = WebSocketProtocolHandler

    @Test func noPingAfterThisSidesClose() {
        var handler = Handler(role: .server, keepAlive: WebSocketKeepAlive(interval: .seconds(20), timeout: .seconds(20)))
        #expect(handler.start() == [.startKeepAliveTimer(.seconds(20))])
        #expect(handler.close(code: .normalClosure) == [.write(Data([0x88, 0x02, 0x03, 0xE8])), .startCloseTimer(.seconds(10))])
        #expect(handler.keepAliveTimerFired() == [])
        #expect(
            handler.closeTimerFired() == [
                .closeTransport(afterWriting: false), .closed(WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false))
            ])
    }

    @Test func aPingUnansweredWhenClosingBeganEndsAtTheCloseTimeoutNotWith1011() {
        var handler = Handler(role: .server, keepAlive: WebSocketKeepAlive(interval: .seconds(20), timeout: .seconds(20)))
        _ = handler.start()
        #expect(handler.keepAliveTimerFired() == [.write(Data([0x89, 0x04, 0, 0, 0, 1])), .startKeepAliveTimer(.seconds(20))])
        _ = handler.close(code: .normalClosure)
        #expect(handler.keepAliveTimerFired() == [])
        #expect(
            handler.closeTimerFired() == [
                .closeTransport(afterWriting: false), .closed(WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false))
            ])
    }

    /// A client that answered the server's Close waits for the server's TCP close: no Ping meanwhile.
    @Test func noPingWhileAClientWaitsForTheServersTCPClose() throws {
        var handler = Handler(role: .client, keepAlive: WebSocketKeepAlive(interval: .seconds(20), timeout: .seconds(20)))
        _ = handler.start()
        var buffer = FrameBuffer()
        buffer.append(contentsOf: [0x88, 0x02, 0x03, 0xE8])  // the server's Close 1000, unmasked
        let outputs = handler.receive(&buffer)
        #expect(outputs.count == 2 && outputs.last == .startCloseTimer(.seconds(10)))
        #expect(handler.keepAliveTimerFired() == [])
    }
}
