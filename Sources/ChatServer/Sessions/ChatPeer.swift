import AsyncSocket
import ChatProtocol
import LongLink

/// One client's connection as the ``Router`` sees it, whatever carries it: the few things the chat
/// asks of a connection. A LongLink session over TCP (or TLS) conforms; any other transport that
/// carries chat protocol frames (a WebSocket, say) conforms the same way and is routed the same way.
///
/// Every method may be called from any thread; the router calls them on its routing queue.
public protocol ChatPeer: AnyObject, Sendable {
    /// Unique among the peers of one server, for as long as the server runs.
    var id: Int { get }
    /// The client's address (for log lines and the login throttle); nil when unknown.
    var remoteAddress: SocketAddress? { get }
    /// Whether the connection is still up (any thread): false once it has ended, even before the
    /// router has heard of its close.
    var isConnected: Bool { get }
    /// Sends `message` after everything sent before it. One that cannot be encoded is not sent and is
    /// reported to the router as a send failure.
    func send(_ message: ChatMessage)
    /// Closes the connection once what was sent to it has gone out.
    func close()
    /// The client is logged in, or its login is being checked: the login deadline no longer applies.
    func admit()
    /// The login failed after all: the login deadline starts again.
    func requireAdmission()
    /// Heartbeat acknowledgements wait from now on, until ``releaseHeartbeatAcknowledgements()`` (so a
    /// heartbeat stays a barrier behind the replies to what was sent before it).
    func holdHeartbeatAcknowledgements()
    /// Sends the heartbeat acknowledgements held since ``holdHeartbeatAcknowledgements()``.
    func releaseHeartbeatAcknowledgements()
    /// What carries the session: the `transport` label of the connection metrics (``ChatMetrics``).
    /// Default ``ChatTransport/tcp``.
    var transport: ChatTransport { get }
}

extension LongLinkServer<ChatCodec>.Session: ChatPeer {
    /// ``ChatTransport/websocket`` for a session over WebSocket (``ChatServer/adoptWebSocket(_:request:responseHeaders:)``),
    /// else ``ChatTransport/tcp``.
    public var transport: ChatTransport { isWebSocket ? .websocket : .tcp }
}

extension ChatPeer {
    /// LongLink's sessions (and any peer that does not say otherwise) are TCP.
    public var transport: ChatTransport { .tcp }

    /// `host:port` of the peer, for log lines about sessions not (yet) logged in; `?` when unknown.
    var address: String { remoteAddress?.description ?? "?" }
}
