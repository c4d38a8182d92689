import AsyncSocket
import Foundation
import SocketFraming

/// What a ``WebSocketListener`` asks and tells its app, on the listener's `delegateQueue` (or on the
/// connection's event loop thread when it is `nil`).
public protocol WebSocketListenerDelegate: AnyObject, Sendable {
    /// An upgrade request passed RFC 6455 §4.2.1's checks: accept it (with a subprotocol the client
    /// offered, if any) or refuse it (its `Origin`, say: 403). Default: accept, no subprotocol.
    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision
    /// The upgrade is done: set `webSocket`'s delegate here; it starts reading once this returns. Keep a
    /// reference to it, as to GCDAsyncSocket's accepted sockets: the listener does not.
    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest)
    /// An ordinary HTTP request (not an upgrade) arrived on `socket`: the app answers it (a page, say)
    /// and closes the socket or reads the next request. Default: `426 Upgrade Required` (with the
    /// listener's ``WebSocketListener/Configuration/responseHeaders``) and close.
    func listener(_ listener: WebSocketListener, didReceive request: HTTPRequestHead, on socket: TCPSocket)
    /// Whether the app takes the connection of `request` (it passed RFC 6455 §4.2.1's checks) as it is,
    /// before anything is answered: for a protocol stack that drives RFC 6455 on the socket itself
    /// (LongLink's sessions over WebSocket, say). Asked before
    /// ``listener(_:shouldAccept:)``, which is not asked then; the listener's
    /// ``WebSocketListener/Configuration/connection`` and ``WebSocketListener/Configuration/deflate`` do
    /// not apply to it. Default: false.
    func listener(_ listener: WebSocketListener, shouldTakeOver request: WebSocketUpgradeRequest) -> Bool
    /// The app took `request`'s connection over (``listener(_:shouldTakeOver:)``): `socket` is the app's, with
    /// nothing written to it and the bytes after the request head still buffered in it (a client's first
    /// frames, say). The app answers the upgrade itself (`101` from `request`'s
    /// `WebSocketUpgradeRequest/accept(subprotocol:extensions:extraHeaders:)`, or an error) and sets the
    /// socket's delegate. Default: the socket is closed.
    func listener(_ listener: WebSocketListener, didTakeOver socket: TCPSocket, request: WebSocketUpgradeRequest)
}

extension WebSocketListenerDelegate {
    public func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        .accept()
    }

    public func listener(_ listener: WebSocketListener, didReceive request: HTTPRequestHead, on socket: TCPSocket) {
        listener.answer(socket, HTTPResponse.upgradeRequired)
    }

    public func listener(_ listener: WebSocketListener, shouldTakeOver request: WebSocketUpgradeRequest) -> Bool { false }

    public func listener(_ listener: WebSocketListener, didTakeOver socket: TCPSocket, request: WebSocketUpgradeRequest) {
        socket.disconnect()
    }
}

extension HTTPResponse {
    /// The answer to a request that is not an upgrade, by default: `426 Upgrade Required` with
    /// `Upgrade: websocket` and `Sec-WebSocket-Version: 13` (RFC 6455 §4.2.2, RFC 9110 §15.5.22).
    static let upgradeRequired = HTTPResponse.plainText(
        statusCode: 426, text: "this port speaks WebSocket",
        extraHeaders: [("Upgrade", "websocket"), ("Sec-WebSocket-Version", WebSocketHandshake.version)])
}

/// The app's answer to an upgrade request.
public enum WebSocketUpgradeDecision: Sendable, Equatable {
    /// Switch protocols, with `subprotocol` (one the client offered) and extra response `headers`.
    case accept(subprotocol: String? = nil, headers: HTTPHeaders = HTTPHeaders())
    /// Refuse with `statusCode` (403 for a foreign `Origin`, say) and a plain-text `text`.
    case refuse(statusCode: Int, text: String)
}
