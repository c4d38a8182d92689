import AsyncSocket
import Foundation
import SocketFraming
import WebSocket

/// A WebSocket endpoint's opening handshake (RFC 6455 §4.1) on a link's socket, from TCP's connect
/// until the server's `101` (loop only).
struct WebSocketOpening {
    let url: WebSocketURL
    /// The address TCP reached, reported with ``LongLinkClient/Event/connected(host:port:)`` once open.
    var host = ""
    var port: UInt16 = 0
    var handshake: WebSocketClientHandshake?
    /// Why the opening failed; the socket's disconnect reports it.
    var failure: WebSocketLinkError?

    init(url: WebSocketURL) { self.url = url }
}

extension LongLinkClient {
    /// TCP reached `host`:`port` for a WebSocket endpoint: TLS first for `wss://` (the link's
    /// ``Configuration/tls``, verified as the URL's host unless it names the server, or the system's
    /// trust store by default), then the upgrade request.
    func openWebSocket(host: String, port: UInt16) {
        guard var opening = resources.opening else { return }
        opening.host = host
        opening.port = port
        resources.opening = opening
        guard opening.url.isSecure else { return sendUpgradeRequest() }
        var tls = configuration.tls ?? .client(peerName: opening.url.host)
        if tls.role == .client && tls.peerName == nil { tls.peerName = opening.url.host }
        resources.socket?.startTLS(tls)
    }

    /// Writes the upgrade request and reads the answer's head (at most 8 KiB, within the connect timeout).
    func sendUpgradeRequest() {
        guard let socket = resources.socket, var opening = resources.opening else { return }
        let handshake = WebSocketClientHandshake(url: opening.url)
        opening.handshake = handshake
        resources.opening = opening
        socket.write(Data(handshake.request.bytes), withTimeout: -1, tag: LinkMachine<Codec>.controlTag)
        let maxBytes = HTTPResponseHeadParser.defaultMaxHeadBytes
        socket.readHTTPHead(
            with: HTTPResponseHeadParser(maxHeadBytes: maxBytes), maxBytes: maxBytes, timeout: configuration.connectTimeout
        ) { [weak self] result in
            guard let self, socket === resources.socket, let result else { return }  // the socket's end reports it
            upgraded(result)
        }
    }

    /// The server's answer: open (the link is connected), or fail the attempt.
    private func upgraded(_ result: Result<HTTPResponseHead, HTTPParseError>) {
        guard let socket = resources.socket, let opening = resources.opening, let handshake = opening.handshake else { return }
        do throws(WebSocketConnectError) {
            let head: HTTPResponseHead
            switch result {
            case .success(let answer): head = answer
            case .failure(let error): throw .badResponse(error)
            }
            do { _ = try handshake.validate(head) } catch { throw .handshake(error) }
        } catch {
            resources.opening?.failure = .opening(error)
            socket.disconnect()
            return
        }
        resources.opening = nil
        resources.webSocket = LinkWebSocketChannel(
            socket: socket, role: .client, maxMessageBytes: codec.makeDecoder().maximumFrameLength,
            controlTag: LinkMachine<Codec>.controlTag)
        feed(.socketConnected(host: opening.host, port: opening.port, greeting: greeting))
        if opening.url.isSecure, resources.socket === socket {
            feed(.secured(protocolVersion: socket.tlsProtocolVersion ?? "", isSessionReused: socket.isTLSSessionReused))
        }
    }

    /// The link's frames from the WebSocket: one binary message each; anything else ends the
    /// connection (its disconnect reports the ``WebSocketLinkError``).
    func startReading(_ webSocket: LinkWebSocketChannel) {
        webSocket.readFrames(
            using: codec.makeDecoder(), pause: { [weak self] in self?.machine.isDropping ?? false },
            onFailure: { [weak webSocket] _ in webSocket?.close(code: .normalClosure) }
        ) { [weak self] frame in
            guard let self, webSocket === resources.webSocket else { return }
            feed(.frame(frame))
        }
    }
}
