import AsyncSocket
import Foundation
import LongLink
import SocketFraming
import WebSocket

extension ChatConnection {
    /// The most bytes of the server's answer to the upgrade: 8 KiB.
    static let maxUpgradeAnswerBytes = HTTPResponseHeadParser.defaultMaxHeadBytes

    /// TCP reached `host`:`port` for a WebSocket connection: the upgrade request for `path` (RFC 6455
    /// §4.1, no `Origin`: not a browser), then, once a `101` that accepts the key is read, the
    /// connection's frames as binary messages (``channel``) and the login. A refusal (`403`, `503`, …)
    /// or an answer not read within 30 s fails the connection. Loop thread.
    func openWebSocket(on sock: TCPSocket, host: String, port: UInt16, path: String) {
        let url: WebSocketURL
        do {
            url = try WebSocketURL("ws://\(ServerAddress(host: host, port: port))\(path)")
        } catch {
            return fail("no WebSocket URL for \(host):\(port)\(path): \(error)")
        }
        let handshake = WebSocketClientHandshake(url: url)
        sock.write(Data(handshake.request.bytes), withTimeout: -1, tag: 0)
        let maxBytes = Self.maxUpgradeAnswerBytes
        sock.readHTTPHead(with: HTTPResponseHeadParser(maxHeadBytes: maxBytes), maxBytes: maxBytes, timeout: 30) {
            [weak self, weak sock] result in
            guard let self, let sock, sock === socket else { return }
            switch result {
            case nil: return  // the socket's end reports it
            case .failure(let error)?: fail("the answer to the WebSocket upgrade: \(error)")
            case .success(let head)?:
                do {
                    _ = try handshake.validate(head)
                } catch {
                    return fail("WebSocket upgrade refused (\(head.statusCode)): \(error)")
                }
                upgraded(sock, host: host, port: port)
            }
        }
    }

    /// The `101` is read: frames from binary messages, then the login.
    private func upgraded(_ sock: TCPSocket, host: String, port: UInt16) {
        let decoder = frameDecoder
        let webSocket = LinkWebSocketChannel(socket: sock, role: .client, maxMessageBytes: decoder.maximumFrameLength, controlTag: 0)
        channel = webSocket
        webSocket.readFrames(
            using: decoder,
            onFailure: { [weak self, weak webSocket] error in
                self?.fail("over WebSocket: \(error)")
                webSocket?.close(code: .normalClosure)
            }
        ) { [weak self, weak sock] frame in
            guard let self, sock === socket else { return }
            received(frame)
        }
        logIn(on: sock, host: host, port: port)
    }
}
