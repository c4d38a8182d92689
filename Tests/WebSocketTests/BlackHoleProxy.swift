import AsyncSocket
import Foundation
import TestSupport

/// A TCP proxy on 127.0.0.1 for tests: forwards both ways to `port` until ``blackHole()``, then drops
/// every byte both ways and keeps both connections open, as a network path that died silently.
/// Callbacks on its sockets' loops; holds every socket until ``close()``.
final class BlackHoleProxy: TCPSocketDelegate, Sendable {
    private struct State {
        var forwarding = true
        var other: [ObjectIdentifier: TCPSocket] = [:]
        var sockets: [TCPSocket] = []
    }

    private let state = LockedValue(State())
    private let targetPort: UInt16
    private let listener: TCPSocket
    /// "dropped N" for each read of N bytes dropped once the path is a black hole.
    let dropped = EventRecorder<String>()
    /// The port to connect to.
    var port: UInt16 { listener.localPort }

    init(to targetPort: UInt16) throws {
        self.targetPort = targetPort
        listener = TCPSocket(delegate: nil, delegateQueue: nil)
        listener.delegate = self
        try listener.accept(onInterface: "127.0.0.1", port: 0)
    }

    /// From now on nothing passes, either way.
    func blackHole() { state.withLock { $0.forwarding = false } }

    func close() {
        listener.disconnect()
        for socket in state.withLock({ $0.sockets }) { socket.disconnect() }
    }

    func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        let upstream = TCPSocket(delegate: self, delegateQueue: nil)
        state.withLock {
            $0.other[ObjectIdentifier(newSocket)] = upstream
            $0.other[ObjectIdentifier(upstream)] = newSocket
            $0.sockets += [newSocket, upstream]
        }
        try? upstream.connect(toHost: "127.0.0.1", onPort: targetPort, withTimeout: -1)
        newSocket.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        sock.readData(withTimeout: -1, tag: 0)
    }

    func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        let (forwarding, other) = state.withLock { ($0.forwarding, $0.other[ObjectIdentifier(sock)]) }
        if forwarding { other?.write(data, withTimeout: -1, tag: 0) } else { dropped.record("dropped \(data.count)") }
        sock.readData(withTimeout: -1, tag: 0)
    }

    func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        let (forwarding, other) = state.withLock { ($0.forwarding, $0.other[ObjectIdentifier(sock)]) }
        if forwarding { other?.disconnectAfterWriting() }
    }
}
