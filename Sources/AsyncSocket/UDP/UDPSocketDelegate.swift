import Foundation

/// What a ``UDPSocket`` tells its owner, in the words of CocoaAsyncSocket's `GCDAsyncUdpSocketDelegate`,
/// plus ``udpSocket(_:didNotReceiveDataFromAddress:dueToError:)`` for what `GCDAsyncUdpSocket` loses
/// silently.
///
/// Every method runs on the socket's ``UDPSocket/delegateQueue``, one at a time and in the order the
/// events happened (sends complete in the order they were queued), or on the socket's event-loop thread
/// when the queue is `nil` (then they must return quickly and never block). The delegate is read when
/// each call is made, so once it is replaced no further call reaches the old one. Every method has a
/// default implementation that does nothing.
public protocol UDPSocketDelegate: AnyObject {
    /// A connect (``UDPSocket/connect(toHost:onPort:)``, ``UDPSocket/connect(to:)``) succeeded: from now
    /// on the socket sends only to `address` and receives only from it.
    func udpSocket(_ sock: UDPSocket, didConnectToAddress address: SocketAddress)

    /// A connect failed: the name did not resolve (``SocketError/hostLookupFailed(host:code:)``), no
    /// address was of an enabled family (``SocketError/badConfig(_:)``), or `connect(2)` failed. The
    /// socket stays usable, unconnected, and may connect again.
    func udpSocket(_ sock: UDPSocket, didNotConnect error: SocketError)

    /// The datagram queued with `tag` was handed to the kernel whole. (UDP gives no delivery receipt:
    /// "sent" is all a sender can know.)
    func udpSocket(_ sock: UDPSocket, didSendDataWithTag tag: Int)

    /// The datagram queued with `tag` was not sent, and `error` says why:
    /// ``SocketError/sendTimeout(tag:)``, ``SocketError/datagramTooLarge(size:maxSendSize:)``,
    /// ``SocketError/messageTooLarge(operation:errno:)`` (`EMSGSIZE`), ``SocketError/unreachable(operation:errno:)``,
    /// ``SocketError/connectionRefused(operation:errno:)`` (an ICMP port unreachable for an earlier
    /// datagram of a connected socket), ``SocketError/hostLookupFailed(host:code:)``,
    /// ``SocketError/notConnected`` (a send without an address on an unconnected socket),
    /// ``SocketError/badConfig(_:)`` (a send with an address on a connected socket, or to a disabled
    /// family), ``SocketError/sendFiltered(tag:)``, ``SocketError/disconnecting`` (after
    /// ``UDPSocket/closeAfterSending()``) or ``SocketError/connectionClosed`` (still queued at
    /// ``UDPSocket/close()``). The socket stays open unless it was closing.
    func udpSocket(_ sock: UDPSocket, didNotSendDataWithTag tag: Int, dueToError error: SocketError)

    /// A datagram arrived (and the receive filter, if any, accepted it). `data` is the whole datagram,
    /// possibly empty; `address` the sender; `filterContext` what the receive filter set, else `nil`.
    func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?)

    /// A datagram could not be received (not in GCDAsyncUdpSocket, which loses these silently or closes
    /// the socket): one longer than the receive size arrived and was discarded
    /// (``SocketError/datagramTruncated(size:maxReceiveSize:)``, with its sender), or the receive call
    /// reported an error left by an ICMP message (``SocketError/connectionRefused(operation:errno:)``
    /// on a connected socket, `address` `nil`). The socket stays open and keeps receiving; a
    /// ``UDPSocket/receiveOnce()`` is not used up.
    func udpSocket(_ sock: UDPSocket, didNotReceiveDataFromAddress address: SocketAddress?, dueToError error: SocketError)

    /// The socket closed: `error` is `nil` after ``UDPSocket/close()`` or ``UDPSocket/closeAfterSending()``,
    /// else what forced it (a failure of the event loop's selector for its descriptor). Called once per
    /// close of a socket that had descriptors; sends still queued were reported as not sent just before.
    func udpSocketDidClose(_ sock: UDPSocket, withError error: SocketError?)
}

extension UDPSocketDelegate {
    public func udpSocket(_ sock: UDPSocket, didConnectToAddress address: SocketAddress) {}
    public func udpSocket(_ sock: UDPSocket, didNotConnect error: SocketError) {}
    public func udpSocket(_ sock: UDPSocket, didSendDataWithTag tag: Int) {}
    public func udpSocket(_ sock: UDPSocket, didNotSendDataWithTag tag: Int, dueToError error: SocketError) {}
    public func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?
    ) {}
    public func udpSocket(_ sock: UDPSocket, didNotReceiveDataFromAddress address: SocketAddress?, dueToError error: SocketError) {}
    public func udpSocketDidClose(_ sock: UDPSocket, withError error: SocketError?) {}
}
