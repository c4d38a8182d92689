import CNATS

extension NATSConnection {
    /// A change of the connection's state, reported by libnats' connection callbacks on libnats'
    /// own callback thread (one thread for the whole library, in the order libnats posted them),
    /// after the change: the state may have changed again by the time the handler runs.
    public enum Event: Sendable, Equatable {
        /// The first connection succeeded after ``Options/retryOnFailedConnect`` let
        /// ``NATSConnection/connect(_:events:)`` return without one.
        case connected
        /// The connection to the server was lost; libnats is reconnecting (unless closed).
        /// Publishes are buffered meanwhile; requests wait or time out. ``NATSConnection/close()``
        /// of a connected connection reports it too, just before ``closed``.
        case disconnected
        /// libnats reconnected (to the same or another server) and resent its subscriptions.
        case reconnected
        /// The connection is closed for good: by ``NATSConnection/close()``, when the connection is
        /// released, or after ``Options/maxReconnects`` failed attempts. The last event.
        case closed
    }
}

/// The events handler as libnats' callbacks' closure: retained for libnats when the connection is
/// created, released after the `.closed` callback, which libnats posts last for a connection.
final class EventSink: Sendable {
    let handler: @Sendable (NATSConnection.Event) -> Void

    init(_ handler: @escaping @Sendable (NATSConnection.Event) -> Void) { self.handler = handler }

    /// The closure pointer for libnats: a +1 reference, given back by `closed` or ``release(_:)``.
    func retainedPointer() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    /// Gives back the reference of ``retainedPointer()`` when libnats will not call back (the
    /// connection was never created).
    static func release(_ pointer: UnsafeMutableRawPointer) {
        Unmanaged<EventSink>.fromOpaque(pointer).release()
    }

    static let connected: natsConnectionHandler = { _, closure in deliver(.connected, closure) }
    static let disconnected: natsConnectionHandler = { _, closure in deliver(.disconnected, closure) }
    static let reconnected: natsConnectionHandler = { _, closure in deliver(.reconnected, closure) }
    static let closed: natsConnectionHandler = { _, closure in
        guard let closure else { return }
        Unmanaged<EventSink>.fromOpaque(closure).takeRetainedValue().handler(.closed)
    }

    private static func deliver(_ event: NATSConnection.Event, _ closure: UnsafeMutableRawPointer?) {
        guard let closure else { return }
        Unmanaged<EventSink>.fromOpaque(closure).takeUnretainedValue().handler(event)
    }
}
