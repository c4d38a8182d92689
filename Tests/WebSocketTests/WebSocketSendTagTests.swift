import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import Testing
import TestSupport
import WebSocket

/// What a ``WebSocket``'s delegate saw of its sends and its end, as lines (`sent 3`, `rejected 4 …`,
/// `closed 1000 (clean)`).
final class SendRecordingDelegate: WebSocketDelegate {
    let events = EventRecorder<String>()

    func webSocket(_ webSocket: WebSocket, didSendMessageWithTag tag: Int) { events.record("sent \(tag)") }

    func webSocket(_ webSocket: WebSocket, didRejectSendWithTag tag: Int, error: WebSocketProtocolHandler.SendError) {
        events.record("rejected \(tag): \(error)")
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) { events.record("closed \(result)") }
}

/// Tags and timeouts on a ``WebSocket``'s sends, over a loopback connection whose client end is a
/// plain TCP socket.
@Suite(.offThePool) struct WebSocketSendTagTests {
    /// Every send's tag comes back once its frame is with the kernel, in the order sent, text and
    /// binary, small and 1 MiB; the peer gets every frame.
    @Test func sendTagsComeBackInTheOrderSent() async throws {
        let pair = try LoopbackPair()
        defer { pair.close() }
        let recorder = SendRecordingDelegate()
        let webSocket = WebSocket.server(upgraded: try await pair.connect(), delegate: recorder)
        var expectedBytes = 0
        for index in 1...100 {
            let tag = 1_000 - index  // not the socket's write numbers
            if index.isMultiple(of: 2) {
                let count = index == 50 ? 1 << 20 : index
                webSocket.send(data: Data(repeating: UInt8(index), count: count), withTimeout: 30, tag: tag)
                expectedBytes += count + (count > 65_535 ? 10 : count > 125 ? 4 : 2)
            } else {
                webSocket.send(text: "message \(index)", tag: tag)
                expectedBytes += "message \(index)".utf8.count + 2
            }
        }
        // The peer reads everything (1 MiB may not fit in the kernel's buffers while nobody reads).
        let received = try await WebSocketLoopbackTests.read(UInt(expectedBytes), from: pair)
        #expect(received.count == expectedBytes)
        #expect(Array(received.prefix(11)) == [0x81, 0x09] + Array("message 1".utf8))
        let events = try await recorder.events.next(100, within: TestTiming.hangLimit(.seconds(10)))
        #expect(events == (1...100).map { "sent \(1_000 - $0)" })
    }

    /// No message after this side's Close (RFC 6455 §5.5.1): a send after `close` is rejected with its
    /// tag, before the peer has even answered, and so is one after the end.
    @Test func aSendAfterClosingBeganIsRejectedWithItsTag() async throws {
        // The close timer (10 s from `close()`) in virtual time. On real time, in one full run under load
        // (the test took 21 s), the end was not `1000 (clean)`: the peer's answer can come after the
        // close timeout has ended the handshake with 1006.
        let group = EventLoopGroup(numberOfThreads: 1, clock: ManualClock(), name: "send-after-close")
        defer { group.shutdown() }
        let pair = try LoopbackPair(group: group)
        defer { pair.close() }
        let recorder = SendRecordingDelegate()
        let webSocket = WebSocket.server(upgraded: try await pair.connect(), delegate: recorder)
        webSocket.send(text: "a", tag: 1)
        webSocket.close()
        webSocket.send(text: "b", tag: 2)
        // A rejection is told at once, so it may come before an earlier message's `sent`.
        #expect(Set(try await recorder.events.next(2)) == ["sent 1", "rejected 2: the WebSocket is closing: no more messages"])
        #expect(try await WebSocketLoopbackTests.read(7, from: pair) == [0x81, 0x01, 0x61, 0x88, 0x02, 0x03, 0xE8])
        pair.client.write(Data([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8]), withTimeout: -1, tag: 3)
        #expect(try await recorder.events.next() == "closed 1000 (clean)")
        webSocket.send(data: Data([1]), tag: 3)
        #expect(try await recorder.events.next() == "rejected 3: the WebSocket is closing: no more messages")
    }

    /// A send's timeout runs, in virtual time, from when its frame is the socket's current write; the
    /// peer never reads, so 32 MiB cannot all reach the kernel: 999 ms after, nothing; 1 ms more, the
    /// connection fails with 1006 carrying that send's tag, and the send queued after it is never reported.
    @Test func aSendThatTimesOutFailsTheConnectionWith1006AndItsTag() async throws {
        let clock = ManualClock()
        let group = EventLoopGroup(numberOfThreads: 1, clock: clock, name: "ws-send-timeout")
        defer { group.shutdown() }
        let pair = try LoopbackPair(group: group, clientGroup: .shared)
        defer { pair.close() }
        let recorder = SendRecordingDelegate()
        let queue = DispatchQueue(label: "ws")
        let webSocket = WebSocket.server(upgraded: try await pair.connect(), delegate: recorder, queue: queue)
        // The app's tags, not the socket's write numbers (1, 2, 3), come back.
        webSocket.send(data: Data(count: 10), tag: 10)
        webSocket.send(data: Data(count: 32 << 20), withTimeout: 1, tag: 20)
        webSocket.send(text: "after", withTimeout: 1, tag: 30)
        #expect(try await recorder.events.next() == "sent 10")
        await clock.advance(by: .milliseconds(999), draining: [queue])
        #expect(recorder.events.pending == [])
        await clock.advance(by: .milliseconds(1), draining: [queue])
        let closed = WebSocketCloseResult(code: .abnormalClosure, reason: "", wasClean: false, error: .writeTimeout(tag: 20))
        #expect(try await recorder.events.next() == "closed \(closed)")
        #expect("\(closed)" == "1006 (not clean): write timed out (tag 20)")
        webSocket.send(text: "late", tag: 4)
        #expect(try await recorder.events.next() == "rejected 4: the WebSocket is closing: no more messages")
    }
}
