import Foundation

extension UDPEndpoint {
    /// One received datagram (SwiftNIO's `AddressedEnvelope<ByteBuffer>`): its bytes, whole, and who
    /// sent it.
    public struct Datagram: Sendable, Hashable {
        /// The datagram's payload, exactly as sent (possibly empty; never cut short: see
        /// ``Options/maxReceiveSize``).
        public var data: Data

        /// The sender's address and port (host byte order in ``SocketAddress/port``), as `recvmmsg(2)`
        /// reported it. Sending a reply to it with ``UDPEndpoint/send(_:to:)`` reaches the sender.
        public var sender: SocketAddress

        /// A datagram of `data` from `sender`.
        public init(data: Data, sender: SocketAddress) {
            self.data = data
            self.sender = sender
        }
    }

    /// What receiving has skipped since the endpoint opened: a count for each kind, and the latest
    /// error. Neither kind ends ``UDPEndpoint/datagrams``; neither is delivered in it.
    public struct SkippedReceives: Sendable, Equatable {
        /// Datagrams longer than ``Options/maxReceiveSize``, discarded whole (``UDPSocket`` asks the
        /// kernel for each datagram's full length with `MSG_TRUNC`, so none is delivered cut short).
        public var truncated = 0

        /// Receive calls that failed with an error an ICMP message left on the socket: on a connected
        /// endpoint, ``SocketError/connectionRefused(operation:errno:)`` (`ECONNREFUSED`, nothing
        /// listens at the peer's port) for an earlier datagram sent. The endpoint stays usable.
        public var failed = 0

        /// The latest of either kind: ``SocketError/datagramTruncated(size:maxReceiveSize:)`` with the
        /// datagram's real size, or the receive call's error; `nil` while nothing was skipped.
        public var lastError: SocketError?

        /// Nothing skipped.
        public init() {}
    }

    /// The received datagrams, oldest first, as an `AsyncSequence` (see ``UDPEndpoint/datagrams``).
    /// Iterators share the endpoint's buffer: each datagram goes to one `next()` call.
    public struct Datagrams: AsyncSequence, Sendable {
        public typealias Element = Datagram
        public typealias Failure = SocketError

        let bridge: UDPEndpointBridge

        /// Makes an iterator over the endpoint's received datagrams.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(bridge: bridge)
        }

        /// Hands out the received datagrams, oldest first.
        public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
            public typealias Element = Datagram
            public typealias Failure = SocketError

            let bridge: UDPEndpointBridge

            /// The next datagram, waiting for one to arrive. Returns `nil` once the endpoint is closed
            /// (``UDPEndpoint/close()`` discards the datagrams not yet taken), and when the calling
            /// task is cancelled (the endpoint stays open: another iteration can carry on).
            ///
            /// - Throws: the error that closed the endpoint, when something other than
            ///   ``UDPEndpoint/close()`` did (a failure of the event loop's selector), once, after
            ///   the datagrams received before it.
            public mutating func next() async throws(SocketError) -> Datagram? {
                try await bridge.next()
            }

            /// As ``next()``; the endpoint's work happens on its event loop whatever `actor` is.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(SocketError) -> Datagram? {
                try await bridge.next()
            }
        }
    }
}
