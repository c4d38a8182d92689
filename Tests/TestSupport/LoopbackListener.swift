import AsyncSocket
import Dispatch
import Foundation

/// A listener on 127.0.0.1 with a free port that records its callbacks and admits the first connection
/// from anyone: for a client that is not a `TCPSocket` of the test's own (a WebSocket client, a
/// process). `LoopbackPair` instead admits only its own client, waiting up to 2 s on its delegate queue
/// for that client's address, which a foreign client never gives it.
public struct LoopbackListener: Sendable {
    public let server: TCPSocket
    public let serverDelegate: RecordingDelegate

    public init(group: EventLoopGroup = .shared) throws {
        serverDelegate = RecordingDelegate(acceptLimit: 1)
        server = TCPSocket(delegate: serverDelegate, delegateQueue: DispatchQueue(label: "listener"), group: group)
        try server.accept(onInterface: "127.0.0.1", port: 0)
    }

    public var port: UInt16 { server.localPort }

    /// The connection accepted first.
    public func accepted() async throws -> TCPSocket {
        guard case .accepted(let socket) = try await serverDelegate.events.next() else {
            throw WaitTimedOut(description: "expected an accept first")
        }
        return socket
    }

    /// The bytes of the next read with `tag` (events before it skipped).
    public func read(tag: Int) async throws -> Data {
        while true {
            if case .read(let data, let readTag) = try await serverDelegate.events.next(), readTag == tag { return data }
        }
    }

    public func close() {
        server.disconnect()
        for socket in serverDelegate.accepted { socket.disconnect() }
    }
}
