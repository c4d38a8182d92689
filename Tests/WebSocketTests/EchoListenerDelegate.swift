import AsyncSocket
import Foundation
import SocketFraming
import TestSupport
import WebSocket

/// Echoes every message with its type (as Autobahn's tested peers do), as a listener's app or as a
/// WebSocket's delegate, and records on ``events``: `accepted TARGET [EXTENSIONS]` for each upgrade
/// accepted, `open [EXTENSIONS]` when a client opens, `failed ERROR` when it fails to, and
/// `closed RESULT after N echoes` at each close. Callbacks on the delegate queue it is given.
final class EchoListenerDelegate: WebSocketListenerDelegate, WebSocketDelegate {
    let events = EventRecorder<String>()
    private let state = LockedValue<(sockets: [WebSocket], echoes: [ObjectIdentifier: Int])>(([], [:]))

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        events.record("accepted \(request.target) \(webSocket.extensions.map(\.description))")
        state.withLock { $0.sockets.append(webSocket) }
        webSocket.delegate = self
    }

    func webSocketDidOpen(_ webSocket: WebSocket, subprotocol: String?, extensions: [WebSocketExtension]) {
        events.record("open \(extensions.map(\.description))")
    }

    func webSocket(_ webSocket: WebSocket, didFailToConnectWith error: WebSocketConnectError) {
        events.record("failed \(error)")
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        default: return
        }
        state.withLock { $0.echoes[ObjectIdentifier(webSocket), default: 0] += 1 }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        let echoed = state.withLock { $0.echoes.removeValue(forKey: ObjectIdentifier(webSocket)) ?? 0 }
        events.record("closed \(result) after \(echoed) echoes")
    }
}
