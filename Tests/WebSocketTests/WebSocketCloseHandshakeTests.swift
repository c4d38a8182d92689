import SocketFraming
import Testing
import WebSocket

/// The closing handshake's rules (RFC 6455 §5.5.1, §7.1), as values.
@Suite struct WebSocketCloseHandshakeTests {
    typealias Handshake = WebSocketCloseHandshake

    @Test func aServerThatClosesWaitsForTheEchoThenClosesTCPAndReportsThePeersCode() {
        var handshake = Handshake(role: .server)
        #expect(
            handshake.close(code: .goingAway, reason: "going away") == [
                .sendClose(code: .goingAway, reason: "going away"), .startTimeout(.seconds(10))
            ]
        )
        #expect(!handshake.canSend && handshake.deliversMessages)
        #expect(handshake.close(code: .normalClosure) == [])
        #expect(handshake.receivedClose(code: .goingAway, reason: "") == [.cancelTimeout, .closeTransport(afterWriting: true)])
        #expect(!handshake.deliversMessages)
        let result = WebSocketCloseResult(code: .goingAway, reason: "", wasClean: true)
        #expect(handshake.transportClosed() == [.report(result)])
        #expect(handshake.state == .closed(result))
        #expect(handshake.transportClosed() == [])
    }

    @Test func aServerAnswersThePeersCloseWithItsCodeAndClosesTCP() {
        var handshake = Handshake(role: .server)
        #expect(
            handshake.receivedClose(code: WebSocketCloseCode(rawValue: 4000), reason: "bye") == [
                .sendClose(code: WebSocketCloseCode(rawValue: 4000), reason: ""), .closeTransport(afterWriting: true)
            ])
        #expect(handshake.state == .handshakeDone(code: WebSocketCloseCode(rawValue: 4000), reason: "bye"))
        #expect(handshake.close(code: .normalClosure) == [])
        #expect(
            handshake.transportClosed() == [
                .report(WebSocketCloseResult(code: WebSocketCloseCode(rawValue: 4000), reason: "bye", wasClean: true))
            ])
    }

    @Test func aCloseWithoutACodeIsAnsweredWithoutOneAndReported1005() {
        var handshake = Handshake(role: .client)
        #expect(handshake.receivedClose(code: nil, reason: "") == [.sendClose(code: nil, reason: ""), .startTimeout(.seconds(10))])
        #expect(
            handshake.transportClosed() == [
                .cancelTimeout, .report(WebSocketCloseResult(code: .noStatusReceived, reason: "", wasClean: true))
            ])
    }

    @Test func aClientWaitsForTheServerToCloseTCPAndClosesItAfterTheTimeout() {
        var handshake = Handshake(role: .client, timeout: .seconds(2))
        #expect(
            handshake.close(code: .normalClosure, reason: "done") == [
                .sendClose(code: .normalClosure, reason: "done"), .startTimeout(.seconds(2))
            ])
        #expect(handshake.receivedClose(code: .normalClosure, reason: "ok") == [])
        let result = WebSocketCloseResult(code: .normalClosure, reason: "ok", wasClean: true)
        #expect(handshake.timeoutFired() == [.closeTransport(afterWriting: false), .report(result)])
        #expect(handshake.transportClosed() == [])
    }

    @Test func aPeerThatNeverAnswersIs1006AfterTheTimeout() {
        var handshake = Handshake(role: .server)
        _ = handshake.close(code: .normalClosure)
        let result = WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false)
        #expect(handshake.timeoutFired() == [.closeTransport(afterWriting: false), .report(result)])
        #expect(handshake.receivedClose(code: .normalClosure, reason: "late") == [])
    }

    @Test func tcpEndingBeforeTheHandshakeIs1006() {
        var open = Handshake(role: .client)
        #expect(open.transportClosed() == [.report(WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false))])
        var closing = Handshake(role: .client)
        _ = closing.close(code: .normalClosure)
        #expect(
            closing.transportClosed() == [
                .cancelTimeout, .report(WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false))
            ])
    }

    @Test func failingSendsTheCodeClosesAfterWritingAndIsNotClean() {
        var handshake = Handshake(role: .server)
        let result = WebSocketCloseResult(code: .invalidPayloadData, reason: "invalid UTF-8", wasClean: false)
        #expect(
            handshake.fail(code: .invalidPayloadData, reason: "invalid UTF-8") == [
                .sendClose(code: .invalidPayloadData, reason: "invalid UTF-8"), .closeTransport(afterWriting: true), .report(result)
            ])
        #expect(handshake.fail(code: .protocolError, reason: "again") == [])
        #expect(handshake.transportClosed() == [])
        var closing = Handshake(role: .client)
        _ = closing.close(code: .normalClosure)
        #expect(
            closing.fail(code: .protocolError, reason: "bad frame") == [
                .cancelTimeout, .closeTransport(afterWriting: false),
                .report(WebSocketCloseResult(code: .protocolError, reason: "bad frame", wasClean: false))
            ])
    }
}
