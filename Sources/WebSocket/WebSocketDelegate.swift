import Foundation
import SocketFraming

/// What a ``WebSocket`` tells its app, on the socket's `delegateQueue`, in the order things happened.
/// Every method has an empty default.
public protocol WebSocketDelegate: AnyObject, Sendable {
    /// A client's opening handshake is done (``WebSocket/connect(to:)``): the server chose `subprotocol`
    /// (one offered, or nil) and `extensions`. Messages may be sent from now on.
    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension])
    /// A client's connection or opening handshake failed (no ``webSocket(_:didCloseWith:)`` follows).
    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError)
    /// A whole text (`.text`, valid UTF-8) or binary (`.binary`) message arrived.
    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage)
    /// A Pong arrived with `payload` (an answer to ``WebSocket/sendPing(_:)``, or unsolicited).
    func webSocket(_ webSocket: WebSocket, didReceivePong payload: Data)
    /// The connection is closed: how (the code and reason of the peer's Close frame, 1005 without one,
    /// 1006 when TCP ended before the closing handshake; this side's code when it failed the connection).
    /// The last call.
    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult)
}

extension WebSocketDelegate {
    public func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {}
    public func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {}
    public func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {}
    public func webSocket(_ webSocket: WebSocket, didReceivePong payload: Data) {}
    public func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {}
}
