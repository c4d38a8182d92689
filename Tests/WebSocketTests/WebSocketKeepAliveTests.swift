import Foundation
import Testing
import WebSocket

/// Keep-alive pings, as values.
@Suite struct WebSocketKeepAliveTests {
    @Test func aPingEveryIntervalAfterItsPongAndATimeoutWithoutOne() {
        var keepAlive = WebSocketKeepAlive(interval: .seconds(20), timeout: .seconds(5))
        #expect(keepAlive.start() == [.startTimer(.seconds(20))])
        #expect(keepAlive.timerFired() == [.sendPing(Data([0, 0, 0, 1])), .startTimer(.seconds(5))])
        #expect(keepAlive.receivedPong(Data([0, 0, 0, 9])) == [])  // answers nothing of ours
        #expect(keepAlive.receivedPong(Data()) == [])
        #expect(keepAlive.receivedPong(Data([0, 0, 0, 1])) == [.startTimer(.seconds(20))])
        #expect(keepAlive.receivedPong(Data([0, 0, 0, 1])) == [])  // again: nothing waits
        #expect(keepAlive.timerFired() == [.sendPing(Data([0, 0, 0, 2])), .startTimer(.seconds(5))])
        #expect(keepAlive.timerFired() == [.timedOut])
    }

    @Test func theDefaultsAreThoseOfPythonWebsockets() {
        let keepAlive = WebSocketKeepAlive()
        #expect(keepAlive.interval == .seconds(20) && keepAlive.timeout == .seconds(20))
        #expect(WebSocketCloseHandshake.defaultTimeout == .seconds(10))
    }
}
