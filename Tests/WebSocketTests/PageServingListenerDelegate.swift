import AsyncSocket
import Foundation
import SocketFraming
import TestSupport
import WebSocket

/// A listener's app for the browser test: serves `page` at `/` to ordinary HTTP requests (404
/// elsewhere), accepts upgrades only from `allowedOrigin` (403 otherwise), echoes every message on
/// `/echo` with its type, and on `/server-close` sends ``farewell`` and closes with
/// ``serverCloseCode`` / ``serverCloseReason``. Each WebSocket event is recorded as `PATH EVENT`.
final class PageServingListenerDelegate: WebSocketListenerDelegate, WebSocketDelegate {
    static let farewell = "server closing ⏻"
    static let serverCloseCode = WebSocketCloseCode(rawValue: 4001)
    static let serverCloseReason = "server says bye – tschüss"

    let page: [UInt8]
    let allowedOrigin: LockedValue<String>
    /// `PATH accepted ORIGIN`, `PATH text …`, `PATH binary N bytes`, `PATH closed RESULT`.
    let events = EventRecorder<String>()
    /// `METHOD TARGET` of each ordinary HTTP request, and `refused ORIGIN` for each upgrade refused.
    let requests = LockedValue<[String]>([])
    private let paths = LockedValue<[ObjectIdentifier: (socket: WebSocket, path: String)]>([:])

    init(page: [UInt8], allowedOrigin: String = "") {
        self.page = page
        self.allowedOrigin = LockedValue(allowedOrigin)
    }

    func listener(_ listener: WebSocketListener, didReceive request: HTTPRequestHead, on socket: TCPSocket) {
        requests.withLock { $0.append("\(request.method) \(request.target)") }
        let response: HTTPResponse
        if request.method == "GET", request.target.split(separator: "?").first == "/" {
            let headers: HTTPHeaders = [
                ("Content-Type", "text/html; charset=utf-8"), ("Content-Length", String(page.count)), ("Cache-Control", "no-store"),
                ("Connection", "close")
            ]
            response = HTTPResponse(head: HTTPResponseHead(statusCode: 200, headers: headers), body: page)
        } else {
            response = HTTPResponse.plainText(statusCode: 404, text: "no such page")
        }
        socket.write(Data(response.bytes), withTimeout: -1, tag: 0)
        socket.disconnectAfterWriting()
    }

    func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        guard request.origin == allowedOrigin.withLock({ $0 }) else {
            requests.withLock { $0.append("refused \(request.origin ?? "no Origin")") }
            return .refuse(statusCode: 403, text: "origin not allowed")
        }
        return .accept()
    }

    func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        paths.withLock { $0[ObjectIdentifier(webSocket)] = (webSocket, request.target) }
        events.record("\(request.target) accepted \(request.origin ?? "no Origin")")
        webSocket.delegate = self
        if request.target == "/server-close" {
            webSocket.send(text: Self.farewell)
            webSocket.close(code: Self.serverCloseCode, reason: Self.serverCloseReason)
        }
    }

    func webSocket(_ webSocket: WebSocket, didReceive message: WebSocketMessage) {
        switch message {
        case .text(let text):
            record(webSocket, text.utf8.count <= 64 ? "text \(text)" : "text \(text.utf8.count) bytes")
            webSocket.send(text: text)
        case .binary(let data):
            record(webSocket, "binary \(data.count) bytes")
            webSocket.send(data: data)
        default: record(webSocket, "other \(message)")
        }
    }

    func webSocket(_ webSocket: WebSocket, didCloseWith result: WebSocketCloseResult) {
        record(webSocket, "closed \(result)")
        paths.withLock { $0[ObjectIdentifier(webSocket)] = nil }
    }

    private func record(_ webSocket: WebSocket, _ event: String) {
        let path = paths.withLock { $0[ObjectIdentifier(webSocket)]?.path } ?? "?"
        events.record("\(path) \(event)")
    }
}
