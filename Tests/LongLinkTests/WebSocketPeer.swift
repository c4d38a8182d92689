import Dispatch
import Foundation
import LongLink
import SocketFraming
import TestSupport
import WebSocket

/// A WebSocket delegate recording what happens as strings: "open", "binary frame(TEXT)" for a binary
/// message that is exactly one ``TextCodec`` frame, "binary N bytes" for any other, "text TEXT",
/// "closed CODE REASON" (with "(clean)" or "(not clean)"), "failed ERROR".
final class WebSocketPeer: WebSocketDelegate, Sendable {
    let events = EventRecorder<String>()
    let queue = DispatchQueue(label: "websocket-peer")

    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {
        events.record("open")
    }

    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
        events.record("failed \(error)")
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .binary(let data):
            let text = String(decoding: data.dropFirst(4), as: UTF8.self)
            events.record(data == TextCodec.frame(text) ? "binary frame(\(text))" : "binary \(data.count) bytes")
        case .text(let text): events.record("text \(text)")
        default: events.record("\(message)")
        }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        events.record("closed \(result)")
    }

    /// A client WebSocket to `url` with this peer as its delegate, connecting.
    func connect(to url: String) throws -> WebSocket {
        let webSocket = WebSocket(client: .init(), delegate: self, delegateQueue: queue)
        try webSocket.connect(to: url)
        return webSocket
    }
}
