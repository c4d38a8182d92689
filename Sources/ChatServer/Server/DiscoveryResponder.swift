import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation

/// The server side of LAN discovery (docs/PROTOCOL.md, "Finding the server"): a ``UDPSocket`` bound to
/// the discovery group's address and port (so it receives datagrams sent to the group and nothing
/// else: no unicast, no broadcast, no other group), a member of the group on chosen interfaces, that
/// answers every valid ``DiscoveryQuery`` with a ``DiscoveryAnswer`` sent by unicast to the query's
/// source address.
///
/// ``ChatServer`` runs one when given a configuration (`im-server` does by default). Several servers on
/// one host share the port (`SO_REUSEADDR` and `SO_REUSEPORT`): each gets its own copy of every query.
/// Datagrams that are not valid queries, and queries for another server name, are ignored and counted
/// in ``statistics``; nothing a datagram holds can stop the responder.
///
/// Threading: the socket's callbacks and the `onlineUsers` closure run on the queue given to
/// ``init(configuration:queue:group:onlineUsers:)``; every method may be called from any thread.
public final class DiscoveryResponder: Sendable {
    /// What to listen to and what name to answer with.
    public struct Configuration: Sendable, Equatable {
        /// The multicast group to bind and join, a numeric IPv4 multicast address (224.0.0.0/4). Default
        /// ``DiscoveryProtocol/defaultGroup`` (239.255.77.77).
        public var group = DiscoveryProtocol.defaultGroup
        /// The UDP port to bind; 0 picks a free one (tests), read it from ``DiscoveryResponder/port``.
        /// Default ``DiscoveryProtocol/defaultPort`` (7777).
        public var port = DiscoveryProtocol.defaultPort
        /// The name this server answers with, and the only non-empty name in a query it answers to:
        /// 1 to 64 bytes of UTF-8, no control characters. Default `"chat"`.
        public var serverName = "chat"

        /// The defaults, with any of them replaced.
        public init(
            group: String = DiscoveryProtocol.defaultGroup, port: UInt16 = DiscoveryProtocol.defaultPort, serverName: String = "chat"
        ) {
            self.group = group
            self.port = port
            self.serverName = serverName
        }
    }

    /// Counts of what arrived since the start, for logs and tests.
    public struct Statistics: Sendable, Equatable {
        /// Queries answered (an answer was queued for sending).
        public var answered = 0
        /// Datagrams that were not a valid query (bad magic, version, kind, size or UTF-8), or were
        /// longer than ``DiscoveryProtocol/maxDatagramBytes``.
        public var malformed = 0
        /// Valid queries for another server name.
        public var otherName = 0

        /// No counts yet, or the ones given.
        public init(answered: Int = 0, malformed: Int = 0, otherName: Int = 0) {
            self.answered = answered
            self.malformed = malformed
            self.otherName = otherName
        }
    }

    /// The configuration it was made with.
    public let configuration: Configuration
    private let socket: UDPSocket
    private let handler: Handler
    private let counts = LockedValue(Statistics())

    /// A responder that is not started yet.
    /// - Parameters:
    ///   - configuration: group, port and name (the name is a precondition: see
    ///     ``Configuration/serverName``).
    ///   - queue: the serial queue the socket's callbacks and `onlineUsers` run on.
    ///   - group: the event loops to take the socket's loop from.
    ///   - onlineUsers: how many users are logged in now; called on `queue` for every answer.
    public init(
        configuration: Configuration, queue: DispatchQueue, group: EventLoopGroup = .shared,
        onlineUsers: @escaping @Sendable () -> Int
    ) {
        precondition(
            !configuration.serverName.isEmpty && DiscoveryQuery.isValidName(configuration.serverName),
            "a server name is 1 to 64 bytes of UTF-8 without control characters")
        self.configuration = configuration
        let handler = Handler(serverName: configuration.serverName, counts: counts, onlineUsers: onlineUsers)
        self.handler = handler
        socket = UDPSocket(delegate: handler, delegateQueue: queue, group: group)
        socket.isIPv6Enabled = false
        socket.maxReceiveIPv4BufferSize = UInt16(DiscoveryProtocol.maxDatagramBytes)
    }

    /// Binds the group's address and port, joins the group on `interfaces` and starts answering that
    /// the chat is at `advertisedHost`:`tcpPort`.
    ///
    /// - Parameters:
    ///   - advertisedHost: the host clients should connect to (a numeric address), or empty for "the
    ///     address the answer comes from" (a server listening on every interface).
    ///   - tcpPort: the chat's TCP port.
    ///   - interfaces: where to join the group: interface addresses or names (`"127.0.0.1"`, `"eth0"`),
    ///     `nil` for the interface the routing table picks for the group. A join that fails with
    ///     `EADDRINUSE` (two entries naming the same interface) is not an error. See
    ///     ``interfaces(forListeningOn:)``.
    /// - Throws: ``SocketError/badParam(_:)`` when the group is not an IPv4 multicast address;
    ///   ``SocketError`` from bind or join (the socket is closed again).
    public func start(advertisedHost: String, tcpPort: UInt16, interfaces: [String?]) throws(SocketError) {
        guard let groupAddress = SocketAddress(ipAddress: configuration.group, port: configuration.port),
            DiscoveryProtocol.isIPv4Multicast(groupAddress)
        else {
            throw SocketError.badParam("not an IPv4 multicast group: \(configuration.group)")
        }
        handler.advertise(host: advertisedHost, tcpPort: tcpPort)
        do throws(SocketError) {
            try socket.enableReuseAddress(true)
            try socket.enableReusePort(true)
            try socket.bind(to: groupAddress)
            Self.receiveOnlyOwnMemberships(socket)
            var joined = 0
            var lastError: SocketError?
            for interface in interfaces {
                do throws(SocketError) {
                    try socket.joinMulticastGroup(configuration.group, onInterface: interface)
                    joined += 1
                } catch  where error.errno == EADDRINUSE && joined > 0 {
                    continue  // the same interface twice (the routed one is loopback)
                } catch {
                    lastError = error
                }
            }
            if let lastError { throw lastError }
            try socket.beginReceiving()
        } catch {
            socket.close()
            throw error
        }
    }

    /// Stops answering and closes the socket.
    public func stop() { socket.close() }

    /// The bound UDP port (the configured one, or the one picked for port 0); 0 before the start.
    public var port: UInt16 { socket.localPortIPv4 }

    /// What arrived so far.
    public var statistics: Statistics { counts.withLock { $0 } }

    /// Where a server listening on `address` should join the group and what it should advertise:
    /// - loopback (`127.0.0.0/8`, `::1`): join on 127.0.0.1 only, advertise the address (only clients
    ///   on this host can reach it);
    /// - every interface (`0.0.0.0`, `::`): join on the routed interface and on 127.0.0.1, advertise an
    ///   empty host (clients use the answer's source address, the server's address on their network);
    /// - another IPv4 address: join on that interface, advertise the address;
    /// - another IPv6 address: join on the routed interface (discovery travels over IPv4), advertise it.
    public static func interfaces(forListeningOn address: SocketAddress) -> (interfaces: [String?], advertisedHost: String) {
        let host = address.host
        switch host {
        case "0.0.0.0", "::": return ([nil, "127.0.0.1"], "")
        case "::1": return (["127.0.0.1"], host)
        default:
            if address.isIPv4 { return (host.hasPrefix("127.") ? ["127.0.0.1"] : [host], host) }
            return ([nil], host)
        }
    }
}

/// Answers queries on the responder's queue; what it advertises and counts is behind locks.
private final class Handler: UDPSocketDelegate, Sendable {
    let serverName: String
    let counts: LockedValue<DiscoveryResponder.Statistics>
    let onlineUsers: @Sendable () -> Int
    let advertisement = LockedValue<(host: String, tcpPort: UInt16)>((host: "", tcpPort: 0))

    init(serverName: String, counts: LockedValue<DiscoveryResponder.Statistics>, onlineUsers: @escaping @Sendable () -> Int) {
        self.serverName = serverName
        self.counts = counts
        self.onlineUsers = onlineUsers
    }

    func advertise(host: String, tcpPort: UInt16) {
        advertisement.withLock { $0 = (host, tcpPort) }
    }

    func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?
    ) {
        let query: DiscoveryQuery
        do {
            query = try DiscoveryQuery(decoding: data)
        } catch {
            counts.withLock { $0.malformed += 1 }
            return
        }
        guard query.serverName.isEmpty || query.serverName == serverName else {
            counts.withLock { $0.otherName += 1 }
            return
        }
        let (host, tcpPort) = advertisement.withLock { $0 }
        guard tcpPort != 0 else { return }
        let answer = DiscoveryAnswer(
            nonce: query.nonce, port: tcpPort, onlineUsers: UInt32(clamping: onlineUsers()),
            host: host, serverName: serverName)
        counts.withLock { $0.answered += 1 }
        sock.send(answer.encoded, to: address, withTimeout: 1, tag: 0)
    }

    func udpSocket(_ sock: UDPSocket, didNotReceiveDataFromAddress address: SocketAddress?, dueToError error: SocketError) {
        counts.withLock { $0.malformed += 1 }  // longer than maxDatagramBytes
    }
}
