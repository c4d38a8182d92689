import Foundation
import SocketFraming

/// What a ``WebSocket`` tells its app, on the socket's `delegateQueue` (or inline on its event loop
/// thread when that is `nil`), in the order things happened.
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
    /// 1006 when TCP ended before the closing handshake, with the error it ended with, such as a send's
    /// write timeout; this side's code when it failed the connection).
    /// The last call.
    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult)
    /// Every frame of the message sent with `tag` (``WebSocket/send(text:withTimeout:tag:)``,
    /// ``WebSocket/send(data:withTimeout:tag:)``) has been handed to the kernel (GCDAsyncSocket's
    /// `socket:didWriteDataWithTag:`): not that the peer has it. In the order the messages were sent.
    func webSocket(_ webSocket: WebSocket, didSendMessageWithTag tag: Int)
    /// The message sent with `tag` was not sent: closing had begun, or the connection was ending
    /// (``WebSocketProtocolHandler/SendError/closing``; RFC 6455 §5.5.1). As TCPSocket's
    /// `socket(_:didRejectWriteWithTag:error:)`; GCDAsyncSocket drops such writes silently. Told at once,
    /// so it can come before ``webSocket(_:didSendMessageWithTag:)`` of messages sent before it.
    func webSocket(_ webSocket: WebSocket, didRejectSendWithTag tag: Int, error: WebSocketProtocolHandler.SendError)
    /// More than the socket's `writeHighWatermark` bytes wait to be written (as TCPSocket's delegate is
    /// told): stop sending until ``webSocket(_:writeQueueDidFallToLowWatermark:)``.
    func webSocket(_ webSocket: WebSocket, writeQueueDidExceedHighWatermark queuedBytes: Int)
    /// The bytes waiting fell to the socket's `writeLowWatermark`: sending may go on.
    func webSocket(_ webSocket: WebSocket, writeQueueDidFallToLowWatermark queuedBytes: Int)
}

extension WebSocketDelegate {
    public func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {}
    public func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {}
    public func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {}
    public func webSocket(_ webSocket: WebSocket, didReceivePong payload: Data) {}
    public func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {}
    public func webSocket(_ webSocket: WebSocket, didSendMessageWithTag tag: Int) {}
    public func webSocket(_ webSocket: WebSocket, didRejectSendWithTag tag: Int, error: WebSocketProtocolHandler.SendError) {}
    public func webSocket(_ webSocket: WebSocket, writeQueueDidExceedHighWatermark queuedBytes: Int) {}
    public func webSocket(_ webSocket: WebSocket, writeQueueDidFallToLowWatermark queuedBytes: Int) {}
}
