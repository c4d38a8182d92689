import AsyncSocket

/// The socket's delegate for a ``WebSocket``, and its entry in its loop's keep-alive list
/// (``WebSocketKeepAliveTimers``). Only the socket's end, writes and watermarks matter here (reads are
/// consuming reads with their own handler), and each is handed to the WebSocket held weakly: one small
/// object per connection, with no closure of its own (seven closures and their contexts were about
/// 300 bytes of every idle connection). Called on the socket's loop (the socket's `delegateQueue` is
/// `nil`).
final class WebSocketSocketCallbacks: TCPSocketDelegate, @unchecked Sendable {
    /// The connection; weak, so the app's letting go of it ends it.
    weak var owner: WebSocket?

    // Loop-confined: the keep-alive list's links (WebSocketKeepAliveTimers).
    /// The next connection in the list (held), the one before it (not held), and this one's deadline
    /// on the loop's clock in nanoseconds.
    var keepAliveNext: WebSocketSocketCallbacks?
    unowned(unsafe) var keepAlivePrevious: WebSocketSocketCallbacks?
    var keepAliveDeadline: UInt64 = 0
    /// The list this one is in, or nil when its timer is not running.
    unowned(unsafe) var keepAliveList: WebSocketKeepAliveTimers.List?

    init() {}

    /// The keep-alive timer came due.
    func keepAliveTimerFired() { owner?.perform { $0.keepAliveTimerFired() } }

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) { owner?.connected() }
    func socketDidSecure(_ sock: TCPSocket) { owner?.sendRequest() }
    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        WebSocketKeepAliveTimers.on(sock.eventLoop).stop(self)
        owner?.ended(err)
    }
    func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) { owner?.wrote(tag) }
    func socket(_ sock: TCPSocket, didRejectWriteWithTag tag: Int, error: SocketError) { owner?.rejectedWrite(tag) }
    func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {
        owner?.watermarkCrossed(writable: false, queuedBytes: queuedBytes)
    }
    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {
        owner?.watermarkCrossed(writable: true, queuedBytes: queuedBytes)
    }
}
