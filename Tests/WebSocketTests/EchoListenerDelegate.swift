import AsyncSocket
import Dispatch
import Foundation
import SocketFraming
import TestSupport
import WebSocket

/// An echo server as the DocC catalog's "A server, delegate style" writes it, as a listener's app or as
/// a WebSocket's delegate: echoes every message with its type (as Autobahn's tested peers do), except
/// a text "close me", which it answers by closing with 1001 "asked".
///
/// Records on ``events``: `accepted TARGET [EXTENSIONS]` for each upgrade accepted, `open [EXTENSIONS]`
/// when a client opens, `failed ERROR` when it fails to, `closing` when it closes as asked, and
/// `closed RESULT after N echoes` at each close; on ``closes``, each close's result alone. Callbacks on
/// the delegate queue it is given.
final class EchoListenerDelegate: WebSocketListenerDelegate, WebSocketDelegate {
    let events = EventRecorder<String>()
    /// Each close's result (`1000 (clean)`), in the order reported.
    let closes = EventRecorder<String>()
    private let state = LockedValue<(open: [ObjectIdentifier: WebSocket], echoes: [ObjectIdentifier: Int])>(([:], [:]))

    /// How many accepted connections have not reported their close yet.
    var openCount: Int { state.withLock { $0.open.count } }

    /// A listener on an ephemeral loopback port with this delegate (delegate queue "echo").
    func start(
        group: EventLoopGroup = .shared, _ configure: (inout WebSocketListener.Configuration) -> Void = { _ in }
    ) throws -> WebSocketListener {
        var configuration = WebSocketListener.Configuration(port: 0)
        configure(&configuration)
        let listener = WebSocketListener(
            configuration: configuration, delegate: self, delegateQueue: DispatchQueue(label: "echo"), group: group)
        try listener.start()
        return listener
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        events.record("accepted \(request.target) \(webSocket.extensions.map(\.description))")
        state.withLock { $0.open[ObjectIdentifier(webSocket)] = webSocket }
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
        case .text("close me"):
            webSocket.close(code: .goingAway, reason: "asked")
            events.record("closing")
            return
        case .text(let text): webSocket.send(text: text)
        case .binary(let data): webSocket.send(data: data)
        default: return
        }
        state.withLock { $0.echoes[ObjectIdentifier(webSocket), default: 0] += 1 }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        let echoed = state.withLock {
            $0.open[ObjectIdentifier(webSocket)] = nil
            return $0.echoes.removeValue(forKey: ObjectIdentifier(webSocket)) ?? 0
        }
        events.record("closed \(result) after \(echoed) echoes")
        closes.record("\(result)")
    }
}
