import Foundation

/// What a ``TCPSocket`` tells its owner, in the words of CocoaAsyncSocket's `GCDAsyncSocketDelegate`.
///
/// Every method is called on the socket's ``TCPSocket/delegateQueue``, one at a time and in the order the
/// events happened: for one socket, reads complete in the order they were queued and so do writes. When
/// the delegate queue is `nil` the methods run on the socket's event-loop thread; they must then return
/// quickly and never block. Every method has an empty default implementation.
public protocol TCPSocketDelegate: AnyObject {
    /// A listening socket accepted a connection. `newSocket` is already connected, has the listening
    /// socket's delegate and delegate queue, and lives on the next loop of the listener's
    /// ``EventLoopGroup``. Keep a reference to it: the library holds it only until it disconnects.
    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket)

    /// A connect finished: `host` is the numeric address actually connected to, `port` its port.
    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16)

    /// A queued read completed with `data` (never empty), carrying the tag the read was queued with.
    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int)

    /// Every byte of a queued write has been handed to the kernel.
    func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int)

    /// The connection ended, or a connect or accept attempt ended. Called exactly once per started
    /// connection. `err` is `nil` only when this side called ``TCPSocket/disconnect()`` (or a
    /// disconnect-after variant); otherwise it says what happened: ``SocketError/closedByPeer``,
    /// ``SocketError/posix(operation:errno:)`` with `ECONNRESET` or `ECONNREFUSED`,
    /// ``SocketError/readTimeout(tag:)``, ``SocketError/connectTimeout`` and so on. Queued reads and
    /// writes that had not completed are discarded.
    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?)

    /// The bytes queued for writing grew past ``TCPSocket/writeHighWatermark``: the peer reads slower
    /// than the app writes. `queuedBytes` is the count at that moment. Pause producing until
    /// ``socket(_:writeQueueDidFallToLowWatermark:)``, or disconnect a consumer that is too slow.
    func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int)

    /// After exceeding the high watermark, the queued write bytes fell to ``TCPSocket/writeLowWatermark``
    /// or below: producing may resume.
    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int)
}

extension TCPSocketDelegate {
    public func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {}
    public func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {}
    public func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {}
    public func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) {}
    public func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {}
    public func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {}
    public func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {}
}
