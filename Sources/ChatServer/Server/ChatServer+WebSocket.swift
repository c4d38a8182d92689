import AsyncSocket
import ChatProtocol
import Foundation
import LongLink
import SocketFraming

extension ChatServer {
    /// Makes a chat session of a WebSocket upgrade another server read and checked (the web port's
    /// `/chat`, with its `Origin` check: ChatWeb's `ChatWebServer`), in this server's one router: the
    /// same kind of session as a TCP client's, with the same limits, rate limits and deadlines (the
    /// login deadline counted from now), counted in the connection metrics with `transport="websocket"`.
    /// Each binary message carries one chat protocol frame (docs/PROTOCOL.md "WebSocket").
    ///
    /// `socket` must have nothing written to it yet and the bytes after the request head unread in it.
    /// Once the server has stopped accepting (``stop()``, ``shutDown(timeout:completion:)``, or before
    /// ``start()``) the upgrade is answered `503 Service Unavailable` and closed instead.
    /// `responseHeaders` are appended to either answer (the `101` or the `503`): the web port's fields
    /// for all its answers (ChatWeb's `WebRoutes.securityHeaders`). Any thread.
    public func adoptWebSocket(_ socket: TCPSocket, request: WebSocketUpgradeRequest, responseHeaders: HTTPHeaders = HTTPHeaders()) {
        guard isAccepting else {
            let refusal = HTTPResponse.plainText(
                statusCode: 503, text: "the chat server is not accepting connections", extraHeaders: responseHeaders)
            socket.write(Data(refusal.bytes), withTimeout: -1, tag: 0)
            socket.disconnectAfterWriting()
            return
        }
        link.adoptWebSocket(socket, request: request, responseHeaders: responseHeaders)
    }
}
