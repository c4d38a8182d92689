import AsyncSocket
import Foundation
import TestSupport

/// A loopback TCP proxy that behaves like a carrier NAT: it forwards each connection to 127.0.0.1:
/// `serverPort` and forgets it once it has been idle (no bytes in either direction) for ``timeout``.
/// A forgotten connection is black-holed: what either side sends after that is dropped and neither
/// side is told (no reset, no close), as a NAT that dropped its mapping does. Its clock is its event
/// loop's (a ``ManualClock`` makes it virtual time): a byte arriving `timeout` or more after the last
/// one finds the connection forgotten. Everything runs on that loop.
final class NATProxy: TCPSocketDelegate, @unchecked Sendable {
    private final class Mapping {
        let inside: TCPSocket
        var outside: TCPSocket?
        var lastTraffic: UInt64
        var forgotten = false
        var waiting: [Data] = []

        init(inside: TCPSocket, now: UInt64) {
            self.inside = inside
            lastTraffic = now
        }
    }

    private let loop: EventLoop
    private let group: EventLoopGroup
    private let serverPort: UInt16
    private let idleLimit: LockedValue<Duration>
    private var listener: TCPSocket?
    private var mappings: [ObjectIdentifier: Mapping] = [:]
    /// Connections forgotten so far.
    let forgottenCount = LockedValue(0)

    /// A proxy on a free loopback port for the server on `serverPort`, forgetting connections idle
    /// for `timeout`, on `group`'s next loop.
    init(serverPort: UInt16, timeout: Duration, group: EventLoopGroup) throws {
        self.group = group
        loop = group.next()
        self.serverPort = serverPort
        idleLimit = LockedValue(timeout)
        let listener = TCPSocket(delegate: nil, delegateQueue: nil, group: group, eventLoop: loop)
        listener.delegate = self
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        self.listener = listener
    }

    /// The proxy's port: connect here instead of to the server.
    var port: UInt16 { listener?.localPort ?? 0 }

    /// How long a connection may be idle before it is forgotten; changing it applies to every
    /// connection from now on (the NAT of the network changed its mind).
    var timeout: Duration {
        get { idleLimit.withLock { $0 } }
        set { idleLimit.withLock { $0 = newValue } }
    }

    func stop() {
        loop.runAndWait { [self] in
            listener?.disconnect()
            listener = nil
            for mapping in mappings.values {
                mapping.inside.disconnect()
                mapping.outside?.disconnect()
            }
            mappings.removeAll()
        }
    }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        let mapping = Mapping(inside: newSocket, now: loop.now())
        let outside = TCPSocket(delegate: self, delegateQueue: nil, group: group, eventLoop: loop)
        mapping.outside = outside
        mappings[ObjectIdentifier(newSocket)] = mapping
        mappings[ObjectIdentifier(outside)] = mapping
        do {
            try outside.connect(toHost: "127.0.0.1", onPort: serverPort, withTimeout: 5)
        } catch {
            newSocket.disconnect()
        }
        newSocket.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        guard let mapping = mappings[ObjectIdentifier(sock)] else { return }
        for data in mapping.waiting { sock.write(data, withTimeout: -1, tag: 0) }
        mapping.waiting.removeAll()
        sock.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        sock.readData(withTimeout: -1, tag: 0)
        guard let mapping = mappings[ObjectIdentifier(sock)] else { return }
        let now = loop.now()
        if !mapping.forgotten, now &- mapping.lastTraffic >= Self.nanoseconds(timeout) {
            mapping.forgotten = true
            forgottenCount.withLock { $0 += 1 }
        }
        guard !mapping.forgotten else { return }  // black-holed
        mapping.lastTraffic = now
        if sock === mapping.inside {
            guard let outside = mapping.outside, outside.isConnected else {
                mapping.waiting.append(data)
                return
            }
            outside.write(data, withTimeout: -1, tag: 0)
        } else {
            mapping.inside.write(data, withTimeout: -1, tag: 0)
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        guard let mapping = mappings.removeValue(forKey: ObjectIdentifier(sock)) else { return }
        // A NAT passes a close on while it knows the connection; a forgotten one stays silent.
        let other = sock === mapping.inside ? mapping.outside : mapping.inside
        if !mapping.forgotten { other?.disconnectAfterWriting() }
    }
}
