import Dispatch
import Foundation

/// An asynchronous UDP socket in the model of CocoaAsyncSocket's `GCDAsyncUdpSocket`: sends queued in
/// order with a timeout and a tag, datagrams received once or continuously, an optional connect,
/// broadcast and multicast, all reported through a ``UDPSocketDelegate``. It lives on an ``EventLoop``
/// like ``TCPSocket``, and does better than `GCDAsyncUdpSocket` where that one fails silently:
///
/// - a datagram longer than the receive size is reported (``SocketError/datagramTruncated(size:maxReceiveSize:)``
///   through ``UDPSocketDelegate/udpSocket(_:didNotReceiveDataFromAddress:dueToError:)``) and never
///   delivered cut short;
/// - a send that fails (too large, unreachable, refused by an ICMP message on a connected socket) fails
///   alone, with ``UDPSocketDelegate/udpSocket(_:didNotSendDataWithTag:dueToError:)``; the socket stays
///   open, and a datagram the kernel did not take is never reported as sent;
/// - an empty datagram is delivered as empty data;
/// - every send still queued at ``close()`` is reported as not sent;
/// - reads take up to 32 datagrams per `recvmmsg(2)` and queued sends go out up to 32 per `sendmmsg(2)`,
///   into and out of the loop's shared buffer (no buffer per idle socket).
///
/// ```swift
/// let socket = UDPSocket(delegate: self, delegateQueue: .main)
/// try socket.bind(toPort: 0)
/// try socket.beginReceiving()
/// socket.send(Data("ping".utf8), toHost: "127.0.0.1", port: peerPort, withTimeout: 5, tag: 1)
/// ```
///
/// Descriptors are made lazily, as `GCDAsyncUdpSocket` does: by ``bind(toPort:)`` and its siblings, by a
/// connect, or by the first send (one IPv4 and one IPv6 socket, as enabled, until a bind or connect picks
/// one family). Threading: every method may be called from any thread; the state lives on the
/// ``eventLoop`` thread. Delegate methods run on ``delegateQueue``, or on the loop thread when it is
/// `nil`, serially and in the order events happened. Lifetime: the library keeps the socket alive while
/// it has descriptors; ``close()`` it when done. After a close it may be used again.
public final class UDPSocket: @unchecked Sendable {
    /// Whether the socket is connected to one peer, as every thread sees it.
    enum ConnectStage: Equatable, Sendable {
        case none, connecting, connected
    }

    /// State readable from any thread, guarded by a lock. Unchecked: the delegate is only ever called on
    /// the delegate queue (or the loop thread); the lock guards the reference.
    struct Shared: @unchecked Sendable {
        weak var delegate: (any UDPSocketDelegate)?
        var delegateQueue: DispatchQueue?
        var userData: (any Sendable)?
        var options = Options()
        var connectStage = ConnectStage.none
        var localIPv4: SocketAddress?
        var localIPv6: SocketAddress?
        var connectedAddress: SocketAddress?
        var hasDescriptors = false
        var isBound = false
        /// ``closeAfterSending()`` was called: connects and binds asked for from now on are refused.
        var closingAfterSends = false
        var receiveFilter: ReceiveFilterSetting?
        var sendFilter: SendFilterSetting?
        /// The thread running a delegate callback of this socket right now, if any.
        var callbackThread: pthread_t?
    }

    let shared: LockedValue<Shared>

    /// The event loop this socket's state and I/O live on.
    public let eventLoop: EventLoop

    // MARK: Loop-confined state

    @exclusivity(unchecked) weak var delegateOnLoop: (any UDPSocketDelegate)?
    @exclusivity(unchecked) var delegateQueueOnLoop: DispatchQueue?
    /// The descriptors: none until first needed, then one per family in use.
    @exclusivity(unchecked) var channels: [DatagramChannel] = []
    /// Sends and connects, in the order they were asked for.
    @exclusivity(unchecked) var sendQueue = RequestQueue<UDPSendRequest>()
    @exclusivity(unchecked) var sendTimeout = RequestTimeout()
    @exclusivity(unchecked) var receiveMode = ReceiveMode.off
    /// The most datagrams one continuous-mode read takes, 1 to ``DatagramBatch/capacity`` (the
    /// default): the async ``UDPEndpoint`` lowers it to the room left in its buffer, so a read never
    /// takes more than the buffer can hold.
    @exclusivity(unchecked) var receiveBatchLimit = DatagramBatch.capacity
    /// An asynchronous receive filter is judging the datagram of a ``receiveOnce()``: reading waits.
    @exclusivity(unchecked) var awaitingReceiveFilter = false
    @exclusivity(unchecked) var flushScheduled = false
    /// ``closeAfterSending()`` reached the loop: sends that reach it later are refused, and the socket
    /// closes once the queue is empty. Set in loop order (not when the call is made), so sends asked for
    /// before the call, whose loop tasks may still be pending, are sent first.
    @exclusivity(unchecked) var closesAfterSends = false
    /// ``channelReadable(_:)`` is handing a batch of datagrams to the delegate: a flush asked for now
    /// runs at the end of the batch instead of as a loop task (``flushAfterReads``).
    @exclusivity(unchecked) var deliveringReads = false
    /// Sends were queued while ``deliveringReads``: flush them when the batch is delivered.
    @exclusivity(unchecked) var flushAfterReads = false
    @exclusivity(unchecked) var nextRequestID: UInt64 = 0
    /// Counts the socket's lives (bumped by every close), so late answers (a name resolved, a filter's
    /// verdict) for a closed life are recognised and dropped.
    @exclusivity(unchecked) var generation: UInt64 = 0

    /// Receiving: off, for one datagram, or continuous.
    enum ReceiveMode {
        case off, once, continuous
    }

    /// Creates a socket with no descriptor yet (GCDAsyncUdpSocket's `initWithDelegate:delegateQueue:`).
    ///
    /// - Parameters:
    ///   - delegate: receives the callbacks; held weakly.
    ///   - delegateQueue: the queue every delegate method runs on. `nil` runs them on the event-loop
    ///     thread with no queue hop; they must then never block.
    ///   - group: the loops to take this socket's loop from (the next one) when `eventLoop` is `nil`.
    ///   - eventLoop: the loop for this socket.
    public init(
        delegate: (any UDPSocketDelegate)?,
        delegateQueue: DispatchQueue?,
        group: EventLoopGroup = .shared,
        eventLoop: EventLoop? = nil
    ) {
        var shared = Shared()
        shared.delegate = delegate
        shared.delegateQueue = delegateQueue
        self.shared = LockedValue(shared)
        self.eventLoop = eventLoop ?? group.next()
        self.delegateOnLoop = delegate
        self.delegateQueueOnLoop = delegateQueue
    }

    // MARK: Internals shared by the extensions

    /// Runs `body` on the loop: inline when already there, otherwise as a task.
    @inline(__always)
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop { body() } else { eventLoop.execute(body) }
    }

    /// Runs `body` on the loop and returns what it returns or throws, waiting for it (GCDAsyncUdpSocket's
    /// `dispatch_sync` onto its socket queue).
    func onLoopAndWait<Value: Sendable>(_ body: @escaping @Sendable () throws(SocketError) -> Value) throws(SocketError) -> Value {
        let result = eventLoop.runAndWait { Result { () throws(SocketError) in try body() } }
        return try result.get()
    }

    /// The descriptor of `family`, if the socket has one.
    func channel(_ family: SocketAddress.Family) -> DatagramChannel? {
        channels.first { $0.family == family }
    }

    /// Brings each descriptor's selector interest in line with what it needs: reading while receiving
    /// (and no asynchronous filter holds a ``receiveOnce()``), writing while a send waits for space.
    func updateInterest() {
        eventLoop.assertInEventLoop()
        let reading = receiveMode != .off && !awaitingReceiveFilter
        for channel in channels {
            var wanted: SelectorInterest = []
            if reading { wanted.insert(.read) }
            if channel.writeBlocked { wanted.insert(.write) }
            guard wanted != channel.interest else { continue }
            do {
                try eventLoop.setInterest(channel.fd, wanted)
                channel.interest = wanted
            } catch {
                close(error: error)
                return
            }
        }
    }
}

/// One descriptor of a ``UDPSocket`` (one per address family in use), registered with the socket's
/// loop. It holds its socket strongly, so an open socket lives until it is closed. Loop thread only.
final class DatagramChannel: Selectable, @unchecked Sendable {
    let fd: Int32
    let family: SocketAddress.Family
    let owner: UDPSocket
    var interest: SelectorInterest = []
    /// A send would block: waiting for the descriptor to turn writable.
    var writeBlocked = false

    init(fd: Int32, family: SocketAddress.Family, owner: UDPSocket) {
        self.fd = fd
        self.family = family
        self.owner = owner
    }

    func selectorReadable() { owner.channelReadable(self) }

    func selectorWritable() {
        writeBlocked = false
        owner.flushSends()
    }
}
