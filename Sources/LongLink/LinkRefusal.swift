/// Why a ``LongLinkServer`` refuses a connection or ends a session on its own. The server tells the
/// client (with the codec's ``LinkCodec/farewell(_:version:)``) just before it closes, so the client
/// learns why instead of seeing a closed socket.
public enum LinkRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The server already holds ``LongLinkServer/Configuration/maxConnections`` connections
    /// (`maxConnections`); this new one is closed, the others are not affected.
    case serverFull(maxConnections: Int)
    /// The client sent bytes that are not a valid frame or message; `reason` says what, in plain words
    /// (``LinkCodec/describe(_:)``).
    case protocolError(String)
    /// The app did not admit the session (``LongLinkServer/Session/admit()``, a login, typically) within
    /// ``LongLinkServer/Configuration/admissionTimeout`` of its connect (`timeout`).
    case admissionTimeout(Duration)
    /// The first byte of a frame arrived more than ``LongLinkServer/Configuration/frameTimeout``
    /// (`timeout`) ago and the frame is still not whole (a slowloris).
    case frameTimeout(Duration)
    /// The server is shutting down (``LongLinkServer/shutDown(timeout:completion:)``): reconnect, to it
    /// once it is back or to another.
    case shuttingDown

    /// One line for logs: "server full (10000 connections)", "protocol error: …", "not admitted within
    /// 10 s", "frame not finished within 10 s", "server shutting down".
    public var description: String {
        switch self {
        case .serverFull(let limit): return "server full (\(limit) connections)"
        case .protocolError(let reason): return "protocol error: \(reason)"
        case .admissionTimeout(let timeout): return "not admitted within \(timeout.secondsText) s"
        case .frameTimeout(let timeout): return "frame not finished within \(timeout.secondsText) s"
        case .shuttingDown: return "server shutting down"
        }
    }
}
