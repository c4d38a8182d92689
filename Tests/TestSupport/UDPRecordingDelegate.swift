import AsyncSocket
import Dispatch
import Foundation

/// What a ``UDPRecordingDelegate`` saw, one case per ``UDPSocketDelegate`` method. Equatable, so tests
/// compare whole callbacks, errors included.
public enum UDPEvent: Sendable, Equatable, CustomStringConvertible {
    case connected(SocketAddress)
    case notConnected(SocketError)
    case sent(tag: Int)
    case notSent(tag: Int, SocketError)
    /// A datagram, its sender and the filter context (recorded only when it is a `String`).
    case received(Data, from: SocketAddress, context: String?)
    case notReceived(from: SocketAddress?, SocketError)
    case closed(SocketError?)

    public var description: String {
        switch self {
        case .connected(let address): return "connected(\(address))"
        case .notConnected(let error): return "notConnected(\(error))"
        case .sent(let tag): return "sent(tag: \(tag))"
        case .notSent(let tag, let error): return "notSent(tag: \(tag), \(error))"
        case .received(let data, let address, let context):
            let text = data.count <= 64 ? String(decoding: data, as: UTF8.self).debugDescription : "\(data.count) bytes"
            return "received(\(text), from: \(address)\(context.map { ", context: \($0)" } ?? ""))"
        case .notReceived(let address, let error): return "notReceived(from: \(address.map(\.description) ?? "nil"), \(error))"
        case .closed(let error): return "closed(\(error.map { "\($0)" } ?? "nil"))"
        }
    }

    /// The payload of a `.received`, else `nil`.
    public var receivedData: Data? {
        if case .received(let data, _, _) = self { return data }
        return nil
    }
}

/// A ``UDPSocketDelegate`` that records every callback in an ``EventRecorder``.
public final class UDPRecordingDelegate: UDPSocketDelegate, Sendable {
    public let events = EventRecorder<UDPEvent>()

    public init() {}

    public func udpSocket(_ sock: UDPSocket, didConnectToAddress address: SocketAddress) {
        events.record(.connected(address))
    }

    public func udpSocket(_ sock: UDPSocket, didNotConnect error: SocketError) {
        events.record(.notConnected(error))
    }

    public func udpSocket(_ sock: UDPSocket, didSendDataWithTag tag: Int) {
        events.record(.sent(tag: tag))
    }

    public func udpSocket(_ sock: UDPSocket, didNotSendDataWithTag tag: Int, dueToError error: SocketError) {
        events.record(.notSent(tag: tag, error))
    }

    public func udpSocket(
        _ sock: UDPSocket, didReceive data: Data, fromAddress address: SocketAddress, withFilterContext filterContext: (any Sendable)?
    ) {
        events.record(.received(data, from: address, context: filterContext as? String))
    }

    public func udpSocket(_ sock: UDPSocket, didNotReceiveDataFromAddress address: SocketAddress?, dueToError error: SocketError) {
        events.record(.notReceived(from: address, error))
    }

    public func udpSocketDidClose(_ sock: UDPSocket, withError error: SocketError?) {
        events.record(.closed(error))
    }
}

/// A ``UDPSocket`` with a ``UDPRecordingDelegate`` and a serial delegate queue of its own.
public final class RecordedUDPSocket: Sendable {
    public let delegate: UDPRecordingDelegate
    public let queue: DispatchQueue
    public let socket: UDPSocket

    /// - Parameter delegate: the recorder; sockets given one recorder record into one sequence.
    public init(_ name: String = "udp", delegate: UDPRecordingDelegate = UDPRecordingDelegate(), group: EventLoopGroup = .shared) {
        self.delegate = delegate
        queue = DispatchQueue(label: name)
        socket = UDPSocket(delegate: delegate, delegateQueue: queue, group: group)
    }

    /// The events recorded so far and not yet taken by `events.next`.
    public var pending: [UDPEvent] { delegate.events.pending }

    /// Returns once every event the socket's loop produced so far has reached the delegate: a task on
    /// the loop, then a block on the delegate queue (for asserting that nothing else arrived).
    public func settle() {
        _ = socket.perform { _ in true }
        queue.sync {}
    }

    /// The next event, waited for up to `limit`.
    public func next(within limit: Duration = .seconds(10)) async throws -> UDPEvent {
        try await delegate.events.next(within: limit)
    }

    deinit { socket.close() }
}
