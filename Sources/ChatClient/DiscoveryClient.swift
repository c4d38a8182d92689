import AsyncSocket
import ChatProtocol
import Dispatch
import Foundation

/// A chat server that answered a discovery query.
public struct DiscoveredServer: Sendable, Equatable, CustomStringConvertible {
    /// The server's name (``DiscoveryAnswer/serverName``).
    public var name: String
    /// Where to connect: the answer's host, or the answer's source address when it advertised none.
    public var host: String
    /// The chat's TCP port.
    public var port: UInt16
    /// Users logged in when it answered.
    public var onlineUsers: UInt32
    /// Where the answer came from (the responder's address and UDP port).
    public var answeredFrom: SocketAddress

    /// A server as found.
    public init(name: String, host: String, port: UInt16, onlineUsers: UInt32, answeredFrom: SocketAddress) {
        self.name = name
        self.host = host
        self.port = port
        self.onlineUsers = onlineUsers
        self.answeredFrom = answeredFrom
    }

    /// `chat at 127.0.0.1:7777 (2 online)`, the name made safe for a terminal.
    public var description: String { "\(name.terminalSafe) at \(host.terminalSafe):\(port) (\(onlineUsers) online)" }
}

/// What a search found.
public struct DiscoveryResult: Sendable, Equatable {
    /// The server to use, by ``DiscoveryClient/choose(from:)``.
    public var chosen: DiscoveredServer
    /// Every distinct server that answered (one entry per host and port), in the order the answers arrived.
    public var servers: [DiscoveredServer]
    /// Datagrams ignored: not valid answers, answers to another search (another nonce), or answers from
    /// another host that advertise a loopback address.
    public var ignoredDatagrams: Int

    /// The line `im-client` prints: `* found chat at 127.0.0.1:7777 (0 online)`, plus
    /// `, the least busy of 2 servers` when several answered.
    public var report: String {
        "* found \(chosen)" + (servers.count > 1 ? ", the least busy of \(servers.count) servers" : "")
    }
}

/// Why a search found nothing.
public enum DiscoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No valid answer arrived within the timeout; `ignoredDatagrams` counts what arrived and was not one.
    case noAnswer(group: String, port: UInt16, timeout: Duration, ignoredDatagrams: Int)
    /// The query could not be sent at all (every socket failed to bind, join or send); the last error.
    case cannotQuery(SocketError)

    /// One line for a person: `no chat server answered discovery on 239.255.77.77:7777 within 1 s`.
    public var description: String {
        switch self {
        case .noAnswer(let group, let port, let timeout, let ignored):
            return "no chat server answered discovery on \(group):\(port) within \(timeout.secondsText) s"
                + (ignored > 0 ? " (\(ignored) datagrams ignored)" : "")
        case .cannotQuery(let error):
            return "cannot send the discovery query: \(error)"
        }
    }
}

/// The client side of LAN discovery (docs/PROTOCOL.md, "Finding the server"): sends a
/// ``DiscoveryQuery`` with a random nonce to the discovery group, collects the ``DiscoveryAnswer``s that
/// echo it for the whole ``Configuration/timeout``, and picks one server by ``choose(from:)``.
///
/// The query goes out twice, at the start and half-way through the window, in case one is lost; the
/// same server answering twice (or over two interfaces) is counted once.
public enum DiscoveryClient {
    /// Where and how long to look.
    public struct Configuration: Sendable, Equatable {
        /// The multicast group queries go to, a numeric IPv4 multicast address (224.0.0.0/4). Default
        /// ``DiscoveryProtocol/defaultGroup`` (239.255.77.77).
        public var group = DiscoveryProtocol.defaultGroup
        /// The group's UDP port. Default ``DiscoveryProtocol/defaultPort`` (7777).
        public var port = DiscoveryProtocol.defaultPort
        /// How long answers are collected, from the first query. Default 1 s.
        public var timeout: Duration = .seconds(1)
        /// The multicast time to live of queries, in router hops (`IP_MULTICAST_TTL`): 1 keeps them on the
        /// local network (default), 0 on this host (tests).
        public var ttl: UInt8 = 1
        /// The interfaces to send the query from, one socket each: an interface address or name
        /// (`IP_MULTICAST_IF`), or `nil` for the one the routing table picks for the group (the LAN).
        /// Default `["127.0.0.1", nil]`: this host's servers and the LAN's. Tests use `["127.0.0.1"]`.
        public var interfaces: [String?] = ["127.0.0.1", nil]
        /// Only a server of this name should answer; empty (default) for any. At most 64 bytes of UTF-8
        /// (a precondition; see ``DiscoveryQuery/isValidName(_:)``).
        public var serverName = ""

        /// The defaults.
        public init() {}
    }

    /// The server a client uses among those that answered: the one with the fewest users online; among
    /// equals, the one whose answer arrived first. `nil` when `servers` is empty. `servers` is in
    /// arrival order.
    public static func choose(from servers: [DiscoveredServer]) -> DiscoveredServer? {
        var best: DiscoveredServer?
        for server in servers where best.map({ server.onlineUsers < $0.onlineUsers }) ?? true {
            best = server
        }
        return best
    }

    /// Searches for chat servers and calls `completion` once, after ``Configuration/timeout`` (or at once
    /// when no query could be sent), on a queue of its own.
    public static func discover(
        _ configuration: Configuration, group: EventLoopGroup = .shared,
        completion: @escaping @Sendable (Result<DiscoveryResult, DiscoveryError>) -> Void
    ) {
        let search = DiscoverySearch(configuration: configuration, loops: group, completion: completion)
        search.start()
    }

    /// Searches for chat servers; returns after ``Configuration/timeout``.
    /// - Throws: ``DiscoveryError/noAnswer(group:port:timeout:ignoredDatagrams:)`` when none answered,
    ///   ``DiscoveryError/cannotQuery(_:)`` when no query could be sent.
    public static func discover(
        _ configuration: Configuration, group: EventLoopGroup = .shared
    ) async throws(DiscoveryError) -> DiscoveryResult {
        let result = await withCheckedContinuation { continuation in
            discover(configuration, group: group) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }
}

/// One search: its sockets, the answers so far, the timers. Unchecked: every mutable property is used on
/// `queue` only (the sockets' delegate queue).
private final class DiscoverySearch: UDPSocketDelegate, @unchecked Sendable {
    let configuration: DiscoveryClient.Configuration
    let loops: EventLoopGroup
    let queue = DispatchQueue(label: "IMChat.DiscoverySearch")
    let nonce = UInt64.random(in: .min ... .max)
    var completion: (@Sendable (Result<DiscoveryResult, DiscoveryError>) -> Void)?
    var sockets: [UDPSocket] = []
    var servers: [DiscoveredServer] = []
    var ignored = 0
    var sent = 0
    var unsent = 0
    var lastError: SocketError?

    init(
        configuration: DiscoveryClient.Configuration, loops: EventLoopGroup,
        completion: @escaping @Sendable (Result<DiscoveryResult, DiscoveryError>) -> Void
    ) {
        self.configuration = configuration
        self.loops = loops
        self.completion = completion
    }

    func start() {
        queue.async { [self] in
            for interface in configuration.interfaces {
                do throws(SocketError) {
                    sockets.append(try openSocket(interface: interface))
                } catch {
                    lastError = error
                }
            }
            guard !sockets.isEmpty else {
                finish()
                return
            }
            // The window runs on the sockets' event loop's clock (a test's ManualClock drives it), and
            // is set before the first query goes out.
            let loop = loops.next()
            loop.scheduleTask(in: configuration.timeout / 2) { [self] in queue.async { [self] in sendQueries(tag: 1) } }
            loop.scheduleTask(in: configuration.timeout) { [self] in queue.async { [self] in finish() } }
            sendQueries(tag: 0)
        }
    }

    func openSocket(interface: String?) throws(SocketError) -> UDPSocket {
        let socket = UDPSocket(delegate: self, delegateQueue: queue, group: loops)
        socket.isIPv6Enabled = false
        socket.maxReceiveIPv4BufferSize = UInt16(DiscoveryProtocol.maxDatagramBytes)
        do throws(SocketError) {
            try socket.enableMulticastLoop(true)
            try socket.setMulticastTTL(configuration.ttl)
            if let interface { try socket.sendIPv4Multicast(onInterface: interface) }
            try socket.bind(toPort: 0)
            try socket.beginReceiving()
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    func sendQueries(tag: Int) {
        guard completion != nil else { return }
        let query = DiscoveryQuery(nonce: nonce, serverName: configuration.serverName).encoded
        for socket in sockets {
            socket.send(
                query, toHost: configuration.group, port: configuration.port,
                withTimeout: configuration.timeout.seconds, tag: tag)
        }
    }

    func finish() {
        guard let completion else { return }
        self.completion = nil
        for socket in sockets { socket.close() }
        sockets = []
        if let chosen = DiscoveryClient.choose(from: servers) {
            completion(.success(DiscoveryResult(chosen: chosen, servers: servers, ignoredDatagrams: ignored)))
        } else if sent == 0, let lastError {
            completion(.failure(.cannotQuery(lastError)))
        } else {
            completion(
                .failure(
                    .noAnswer(
                        group: configuration.group, port: configuration.port,
                        timeout: configuration.timeout, ignoredDatagrams: ignored)))
        }
    }

    func udpSocket(_ sock: UDPSocket, didSendDataWithTag tag: Int) {
        sent += 1
    }

    func udpSocket(_ sock: UDPSocket, didNotSendDataWithTag tag: Int, dueToError error: SocketError) {
        guard completion != nil else { return }
        unsent += 1
        lastError = error
        // Every query of the first round failed: nothing will answer, say so at once.
        if sent == 0 && unsent == sockets.count && tag == 0 { finish() }
    }

    func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?
    ) {
        guard completion != nil else { return }
        guard let answer = try? DiscoveryAnswer(decoding: data), answer.nonce == nonce else {
            ignored += 1
            return
        }
        let host = answer.host.isEmpty ? address.host : answer.host
        // A loopback address is only meaningful from this host.
        guard !DiscoveryProtocol.isLoopback(host) || DiscoveryProtocol.isLoopback(address.host) else {
            ignored += 1
            return
        }
        guard !servers.contains(where: { $0.host == host && $0.port == answer.port }) else { return }
        servers.append(
            DiscoveredServer(
                name: answer.serverName, host: host, port: answer.port,
                onlineUsers: answer.onlineUsers, answeredFrom: address))
    }

    func udpSocket(_ sock: UDPSocket, didNotReceiveDataFromAddress address: SocketAddress?, dueToError error: SocketError) {
        if completion != nil { ignored += 1 }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// `1`, `0.5`: the seconds without a needless `.0`.
    var secondsText: String {
        let seconds = seconds
        return seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
    }

    /// The duration for Dispatch, in nanoseconds (negative durations as zero).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)))
    }
}
