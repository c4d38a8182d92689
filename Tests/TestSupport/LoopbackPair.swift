import AsyncSocket
import Dispatch
import Foundation

/// A listener on 127.0.0.1 with a free port, and a client socket, both recording their callbacks; the
/// client on `clientGroup` when given (one end on a manual clock, the other on real time).
public struct LoopbackPair: Sendable {
    public let server: TCPSocket
    public let serverDelegate: RecordingDelegate
    public let client: TCPSocket
    public let clientDelegate: RecordingDelegate

    public init(
        host: String = "127.0.0.1",
        group: EventLoopGroup = .shared,
        clientGroup: EventLoopGroup? = nil,
        recordsProgress: Bool = false,
        onAccept: (@Sendable (TCPSocket) -> Void)? = nil,
        onServerRead: (@Sendable (TCPSocket, Data, Int) -> Void)? = nil
    ) throws {
        serverDelegate = RecordingDelegate(
            acceptLimit: 1, recordsProgress: recordsProgress, onAccept: onAccept, onRead: onServerRead)
        server = TCPSocket(delegate: serverDelegate, delegateQueue: DispatchQueue(label: "server"), group: group)
        try server.accept(onInterface: host, port: 0)
        clientDelegate = RecordingDelegate(recordsProgress: recordsProgress)
        client = TCPSocket(delegate: clientDelegate, delegateQueue: DispatchQueue(label: "client"), group: clientGroup ?? group)
        // Only the pair's own client gets in: a stray connection (a finished test's client retrying a port
        // number this listener has been given since) is turned away, not mistaken for it.
        let client = self.client
        serverDelegate.admitOnly { accepted in
            let deadline = ContinuousClock.now + .seconds(2)
            while client.localAddress == nil && ContinuousClock.now < deadline { usleep(500) }
            guard let local = client.localAddress else { return true }
            return accepted.connectedAddress == local
        }
    }

    public var port: UInt16 { server.localPort }

    /// Connects the client and returns the server's side of the connection.
    public func connect(host: String = "127.0.0.1") async throws -> TCPSocket {
        try client.connect(toHost: host, onPort: port, withTimeout: TestTiming.hangTimeout(5))
        guard case .accepted(let accepted) = try await serverDelegate.events.next() else {
            throw WaitTimedOut(description: "expected an accept first")
        }
        guard case .connected = try await clientDelegate.events.next() else {
            throw WaitTimedOut(description: "expected the client to connect")
        }
        return accepted
    }

    public func close() {
        client.disconnect()
        server.disconnect()
        for socket in serverDelegate.accepted { socket.disconnect() }
    }
}
