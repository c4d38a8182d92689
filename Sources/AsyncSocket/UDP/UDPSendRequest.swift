import Foundation

/// One entry of a ``UDPSocket``'s send queue: a datagram, or a connect (which GCDAsyncUdpSocket also
/// runs through its send queue, so sends queued before it go out unconnected and those after it wait
/// for it). Loop thread only.
struct UDPSendRequest {
    enum Kind {
        case datagram(Data)
        case connect
    }

    /// Where the entry goes.
    enum Destination {
        /// The connected peer (``UDPSocket/send(_:withTimeout:tag:)``).
        case peer
        /// A known address.
        case address(SocketAddress)
        /// A name being resolved off the loop.
        case resolving(host: String)
        /// The name did not resolve to a usable address.
        case failed(SocketError)
    }

    var kind: Kind
    var destination: Destination
    /// Seconds from when the entry reaches the head of the queue; negative means none.
    var timeout: TimeInterval
    var tag: Int
    var id: UInt64 = 0
    /// The send filter accepted the datagram.
    var filterPassed = false
    /// An asynchronous send filter is judging the datagram.
    var isFiltering = false

    /// The payload's size in bytes (0 for a connect).
    var count: Int {
        if case .datagram(let data) = kind { return data.count }
        return 0
    }
}
