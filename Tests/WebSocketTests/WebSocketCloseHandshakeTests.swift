import Testing
import WebSocket

/// The closing handshake's rules (RFC 6455 §5.5.1, §7.1), as values.
@Suite struct WebSocketCloseHandshakeTests {
    typealias Handshake = WebSocketCloseHandshake

    @Test func aServerThatClosesWaitsForTheEchoThenClosesTCPAndReportsThePeersCode() {
        var handshake = Handshake(role: .server)
        #expect(
            handshake.close(code: 1001, reason: "going away") == [.sendClose(code: 1001, reason: "going away"), .startTimeout(.seconds(10))]
        )
        #expect(!handshake.canSend && handshake.deliversMessages)
        #expect(handshake.close(code: 1000) == [])
        #expect(handshake.receivedClose(code: 1001, reason: "") == [.cancelTimeout, .closeTransport(afterWriting: true)])
        #expect(!handshake.deliversMessages)
        let result = WebSocketCloseResult(code: 1001, reason: "", wasClean: true)
        #expect(handshake.transportClosed() == [.report(result)])
        #expect(handshake.state == .closed(result))
        #expect(handshake.transportClosed() == [])
    }

    @Test func aServerAnswersThePeersCloseWithItsCodeAndClosesTCP() {
        var handshake = Handshake(role: .server)
        #expect(
            handshake.receivedClose(code: 4000, reason: "bye") == [.sendClose(code: 4000, reason: ""), .closeTransport(afterWriting: true)])
        #expect(handshake.state == .handshakeDone(code: 4000, reason: "bye"))
        #expect(handshake.close(code: 1000) == [])
        #expect(handshake.transportClosed() == [.report(WebSocketCloseResult(code: 4000, reason: "bye", wasClean: true))])
    }

    @Test func aCloseWithoutACodeIsAnsweredWithoutOneAndReported1005() {
        var handshake = Handshake(role: .client)
        #expect(handshake.receivedClose(code: nil, reason: "") == [.sendClose(code: nil, reason: ""), .startTimeout(.seconds(10))])
        #expect(handshake.transportClosed() == [.cancelTimeout, .report(WebSocketCloseResult(code: 1005, reason: "", wasClean: true))])
    }

    @Test func aClientWaitsForTheServerToCloseTCPAndClosesItAfterTheTimeout() {
        var handshake = Handshake(role: .client, timeout: .seconds(2))
        #expect(handshake.close(code: 1000, reason: "done") == [.sendClose(code: 1000, reason: "done"), .startTimeout(.seconds(2))])
        #expect(handshake.receivedClose(code: 1000, reason: "ok") == [])
        let result = WebSocketCloseResult(code: 1000, reason: "ok", wasClean: true)
        #expect(handshake.timeoutFired() == [.closeTransport(afterWriting: false), .report(result)])
        #expect(handshake.transportClosed() == [])
    }

    @Test func aPeerThatNeverAnswersIs1006AfterTheTimeout() {
        var handshake = Handshake(role: .server)
        _ = handshake.close(code: 1000)
        let result = WebSocketCloseResult(code: 1006, reason: "", wasClean: false)
        #expect(handshake.timeoutFired() == [.closeTransport(afterWriting: false), .report(result)])
        #expect(handshake.receivedClose(code: 1000, reason: "late") == [])
    }

    @Test func tcpEndingBeforeTheHandshakeIs1006() {
        var open = Handshake(role: .client)
        #expect(open.transportClosed() == [.report(WebSocketCloseResult(code: 1006, reason: "", wasClean: false))])
        var closing = Handshake(role: .client)
        _ = closing.close(code: 1000)
        #expect(closing.transportClosed() == [.cancelTimeout, .report(WebSocketCloseResult(code: 1006, reason: "", wasClean: false))])
    }

    @Test func failingSendsTheCodeClosesAfterWritingAndIsNotClean() {
        var handshake = Handshake(role: .server)
        let result = WebSocketCloseResult(code: 1007, reason: "invalid UTF-8", wasClean: false)
        #expect(
            handshake.fail(code: 1007, reason: "invalid UTF-8") == [
                .sendClose(code: 1007, reason: "invalid UTF-8"), .closeTransport(afterWriting: true), .report(result)
            ])
        #expect(handshake.fail(code: 1002, reason: "again") == [])
        #expect(handshake.transportClosed() == [])
        var closing = Handshake(role: .client)
        _ = closing.close(code: 1000)
        #expect(
            closing.fail(code: 1002, reason: "bad frame") == [
                .cancelTimeout, .closeTransport(afterWriting: false),
                .report(WebSocketCloseResult(code: 1002, reason: "bad frame", wasClean: false))
            ])
    }
}
