import AsyncSocket
import Foundation

/// What a ``RecordingDelegate`` saw, one case per delegate method.
public enum SocketEvent: Sendable, CustomStringConvertible {
    case accepted(TCPSocket)
    case connected(host: String, port: UInt16)
    case read(Data, tag: Int)
    case wrote(tag: Int)
    case disconnected(SocketError?)
    case highWatermark(Int)
    case lowWatermark(Int)

    public var description: String {
        switch self {
        case .accepted(let socket): return "accepted(\(socket.connectedAddress?.description ?? "?"))"
        case .connected(let host, let port): return "connected(\(host):\(port))"
        case .read(let data, let tag): return "read(\(String(decoding: data, as: UTF8.self).debugDescription), tag: \(tag))"
        case .wrote(let tag): return "wrote(tag: \(tag))"
        case .disconnected(let error): return "disconnected(\(error.map { "\($0)" } ?? "nil"))"
        case .highWatermark(let bytes): return "highWatermark(\(bytes))"
        case .lowWatermark(let bytes): return "lowWatermark(\(bytes))"
        }
    }

    /// The data of a `.read`, else nil.
    public var readData: Data? {
        if case .read(let data, _) = self { return data }
        return nil
    }
}

/// A ``TCPSocketDelegate`` that records every callback, keeps accepted sockets alive, and can react to
/// an accept (for example to queue the first read) through `onAccept`.
public final class RecordingDelegate: TCPSocketDelegate, Sendable {
    public let events = EventRecorder<SocketEvent>()
    private let acceptedSockets = LockedValue<[TCPSocket]>([])
    private let onAccept: (@Sendable (TCPSocket) -> Void)?
    private let onRead: (@Sendable (TCPSocket, Data, Int) -> Void)?

    public init(
        onAccept: (@Sendable (TCPSocket) -> Void)? = nil,
        onRead: (@Sendable (TCPSocket, Data, Int) -> Void)? = nil
    ) {
        self.onAccept = onAccept
        self.onRead = onRead
    }

    /// Sockets accepted so far, in order.
    public var accepted: [TCPSocket] { acceptedSockets.withLock { $0 } }

    public func socket(_ sock: TCPSocket, didAcceptNewSocket newSocket: TCPSocket) {
        acceptedSockets.withLock { $0.append(newSocket) }
        onAccept?(newSocket)
        events.record(.accepted(newSocket))
    }

    public func socket(_ sock: TCPSocket, didConnectToHost host: String, port: UInt16) {
        events.record(.connected(host: host, port: port))
    }

    public func socket(_ sock: TCPSocket, didRead data: Data, withTag tag: Int) {
        events.record(.read(data, tag: tag))
        onRead?(sock, data, tag)
    }

    public func socket(_ sock: TCPSocket, didWriteDataWithTag tag: Int) {
        events.record(.wrote(tag: tag))
    }

    public func socketDidDisconnect(_ sock: TCPSocket, withError err: SocketError?) {
        events.record(.disconnected(err))
    }

    public func socket(_ sock: TCPSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {
        events.record(.highWatermark(queuedBytes))
    }

    public func socket(_ sock: TCPSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {
        events.record(.lowWatermark(queuedBytes))
    }
}
