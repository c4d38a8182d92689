import Foundation

/// What a ``TCPSocket`` tells its owner, in the words of CocoaAsyncSocket's `GCDAsyncSocketDelegate`.
///
/// Every method is called on the socket's ``TCPSocket/delegateQueue``, one at a time and in the order the
/// events happened: for one socket, reads complete in the order they were queued and so do writes. When
/// the delegate queue is `nil` the methods run on the socket's event-loop thread; they must then return
/// quickly and never block. The delegate is read when each call is made, so once it is set to `nil` (or
/// replaced) no further call reaches the old one. Every method has a default implementation that does
/// nothing (and, for the timeout questions, answers 0: no extension).
public protocol TCPSocketDelegate: AnyObject {
    /// A listening socket accepted a connection. `newSocket` is already connected, has the listening
    /// socket's delegate, delegate queue and options, and lives on the next loop of the listener's
    /// ``EventLoopGroup``. It starts reading from the network only after this method returns, so set it
    /// up here. Keep a reference to it: the library holds it only until it disconnects.
    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket)

    /// A connect finished: `host` is the numeric address actually connected to, `port` its port.
    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16)

    /// A connect to a Unix-domain socket finished (GCDAsyncSocket's `socket:didConnectToUrl:`); `url`
    /// is the socket's file URL.
    func socket(_ sock: TCPSocket, didConnectToUrl url: URL)

    /// A queued read completed with `data` (never empty), carrying the tag the read was queued with.
    /// For a read into a caller's buffer, `data` is a copy of the bytes just written into that buffer.
    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int)

    /// The current read (to a length or to a delimiter) received `partialLength` more bytes but is not
    /// complete yet (GCDAsyncSocket's `socket:didReadPartialDataOfLength:tag:`), for progress display.
    func socket(_ sock: TCPSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int)

    /// Every byte of a queued write has been handed to the kernel.
    func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int)

    /// The current write handed `partialLength` more bytes to the kernel but is not complete yet.
    func socket(_ sock: TCPSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int)

    /// The current read reached its timeout. Return a number of seconds to extend it by, or 0 (or a
    /// negative number) to let it fail: the socket then disconnects with
    /// ``SocketError/readTimeout(tag:)``. `elapsed` is the read's total time so far in seconds
    /// (its timeout plus earlier extensions); `bytesDone` what it has received.
    func socket(_ sock: TCPSocket, shouldTimeoutReadWithTag tag: Int, elapsed: TimeInterval, bytesDone length: UInt) -> TimeInterval

    /// The current write reached its timeout; as ``socket(_:shouldTimeoutReadWithTag:elapsed:bytesDone:)``,
    /// failing with ``SocketError/writeTimeout(tag:)``.
    func socket(_ sock: TCPSocket, shouldTimeoutWriteWithTag tag: Int, elapsed: TimeInterval, bytesDone length: UInt) -> TimeInterval

    /// The peer closed its side of the connection (sent FIN) and every byte it sent has been read or
    /// can no longer complete a read, while ``TCPSocket/autoDisconnectOnClosedReadStream`` is off. The
    /// socket stays connected for writing (a half-close, as GCDAsyncSocket's `socketDidCloseReadStream:`).
    /// Queued reads that could not complete were rejected with ``SocketError/closedByPeer``.
    func socketDidCloseReadStream(_ sock: TCPSocket)

    /// The TLS handshake of ``TCPSocket/startTLS(_:)`` is done and the peer verified (GCDAsyncSocket's
    /// `socketDidSecure:`): reads and writes queued after `startTLS` now go through TLS. On the
    /// delegate queue.
    func socketDidSecure(_ sock: TCPSocket)

    /// A client's TLS handshake with ``TLSConfiguration/manuallyEvaluatesTrust`` has the server's
    /// certificates and waits for the app's decision (GCDAsyncSocket's
    /// `socket:didReceiveTrust:completionHandler:`). Call `completionHandler` once, from any thread and
    /// at any time: `true` trusts the server (the handshake goes on, and ``socketDidSecure(_:)``
    /// follows), `false` fails it with ``TLSError/certificateUntrusted(_:)``. Until then nothing is read
    /// or written through TLS, and the handshake timeout is stopped. `trust` says what OpenSSL's own
    /// check found (``TLSPeerTrust/verificationError``). On the delegate queue. The default answers `false`.
    func socket(_ sock: TCPSocket, didReceiveTrust trust: TLSPeerTrust, completionHandler: @escaping @Sendable (Bool) -> Void)

    /// A read could not be queued, or was dropped unfinished because the read stream closed: `error`
    /// says why (``SocketError/badParam(_:)`` for a zero length, an empty delimiter or a buffer offset
    /// past the buffer's end; ``SocketError/notConnected`` when the socket is not connecting or
    /// connected; ``SocketError/disconnecting`` after a disconnect-after call;
    /// ``SocketError/closedByPeer`` after the read stream closed).
    /// GCDAsyncSocket drops such requests silently.
    func socket(_ sock: TCPSocket, didRejectReadWithTag tag: Int, error: SocketError)

    /// A write could not be queued (empty data, not connecting or connected, disconnecting, write
    /// stream closed); `error` says why. GCDAsyncSocket drops such requests silently.
    func socket(_ sock: TCPSocket, didRejectWriteWithTag tag: Int, error: SocketError)

    /// The bytes queued for writing grew past ``TCPSocket/writeHighWatermark``: the peer reads slower
    /// than the app writes. `queuedBytes` is the count at that moment. Pause producing until
    /// ``socket(_:writeQueueDidFallToLowWatermark:)``, or disconnect a consumer that is too slow.
    func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int)

    /// After exceeding the high watermark, the queued write bytes fell to ``TCPSocket/writeLowWatermark``
    /// or below: producing may resume.
    func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int)

    /// The connection is about to end, and some bytes were received that no read took (a partly filled
    /// read to length, data after the last delimiter) or some writes were not fully sent. `unreadData`
    /// holds those bytes; `unsentWriteTags` the tags of those writes, oldest first. Called right before
    /// ``socketDidDisconnect(_:withError:)``, and only when there is something to report.
    func socketWillDisconnect(_ sock: TCPSocket, unreadData: Data, unsentWriteTags: [Int])

    /// The connection ended, or a connect or accept attempt ended. Called exactly once per started
    /// connection (or connect attempt, or listening). `err` is `nil` only when this side called
    /// ``TCPSocket/disconnect()`` or a disconnect-after variant (or both directions were closed in a
    /// half-close); otherwise it says what happened: ``SocketError/closedByPeer``,
    /// ``SocketError/connectionReset(operation:errno:)``, ``SocketError/connectionRefused(operation:errno:)``,
    /// ``SocketError/readTimeout(tag:)``, ``SocketError/connectTimeout`` and so on. Queued reads and
    /// writes that had not completed are discarded (see ``socketWillDisconnect(_:unreadData:unsentWriteTags:)``).
    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?)
}

extension TCPSocketDelegate {
    public func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {}
    public func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {}
    public func socket(_ sock: TCPSocket, didConnectToUrl url: URL) {}
    public func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {}
    public func socket(_ sock: TCPSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {}
    public func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) {}
    public func socket(_ sock: TCPSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {}
    public func socket(_ sock: TCPSocket, shouldTimeoutReadWithTag tag: Int, elapsed: TimeInterval, bytesDone length: UInt) -> TimeInterval
    { 0 }
    public func socket(_ sock: TCPSocket, shouldTimeoutWriteWithTag tag: Int, elapsed: TimeInterval, bytesDone length: UInt) -> TimeInterval
    { 0 }
    public func socketDidCloseReadStream(_ sock: TCPSocket) {}
    public func socketDidSecure(_ sock: TCPSocket) {}
    /// Does not trust: a delegate that asks for manual trust evaluation must decide (as GCDAsyncSocket
    /// fails the handshake when its delegate lacks the method).
    public func socket(_ sock: TCPSocket, didReceiveTrust trust: TLSPeerTrust, completionHandler: @escaping @Sendable (Bool) -> Void) {
        completionHandler(false)
    }
    public func socket(_ sock: TCPSocket, didRejectReadWithTag tag: Int, error: SocketError) {}
    public func socket(_ sock: TCPSocket, didRejectWriteWithTag tag: Int, error: SocketError) {}
    public func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {}
    public func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {}
    public func socketWillDisconnect(_ sock: TCPSocket, unreadData: Data, unsentWriteTags: [Int]) {}
    public func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {}
}
