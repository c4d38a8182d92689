import AsyncSocket
import ChatServer
import Dispatch
import Foundation
import Metrics
import SocketFraming
import WebSocket

/// `im-server --web-port`: one HTTP port, served through WebSocket's ``WebSocketListener``, with the
/// operator's endpoints (`GET /metrics`, `GET /healthz`) in a route table (``WebRoutes``); the web
/// client and the chat over WebSocket at `/chat` come later, on the same port.
///
/// Each ordinary request is answered and its connection closed (`Connection: close`). Every answer
/// of the route table carries `X-Content-Type-Options: nosniff`. Upgrades are decided in one place,
/// ``upgradeDecision(for:)``: refused for now. Delegate calls run on a queue of its own.
public final class ChatWebServer: WebSocketListenerDelegate, @unchecked Sendable {
    /// The routes: `/metrics` and `/healthz` (``operatorRoutes(metrics:isHealthy:)``), then what the app adds.
    public let routes: WebRoutes
    private let queue = DispatchQueue(label: "IMChat.ChatWebServer")
    private var listener: WebSocketListener?

    /// A web server for `chat` on `host`:`port` (0: a free one), not listening yet: call ``start()``.
    public convenience init(chat: ChatServer, host: String = "127.0.0.1", port: UInt16, group: EventLoopGroup = .shared) {
        self.init(
            routes: ChatWebServer.operatorRoutes(metrics: chat.metrics.registry, isHealthy: { chat.isHealthy }),
            host: host, port: port, group: group)
    }

    /// A web server answering with `routes` on `host`:`port` (0: a free one), not listening yet.
    public init(routes: WebRoutes, host: String = "127.0.0.1", port: UInt16, group: EventLoopGroup = .shared) {
        self.routes = routes
        listener = nil
        listener = WebSocketListener(
            configuration: WebSocketListener.Configuration(host: host, port: port), delegate: self, delegateQueue: queue,
            group: group)
    }

    /// `GET /metrics`: `registry` in the Prometheus text format 0.0.4 (`Content-Type: text/plain;
    /// version=0.0.4; charset=utf-8`); `GET /healthz`: `200 ok` while `isHealthy()` (for
    /// ``ChatServer/isHealthy``: accepting connections and, in a cluster, connected to NATS), else `503
    /// unavailable`.
    public static func operatorRoutes(metrics registry: MetricsRegistry, isHealthy: @escaping @Sendable () -> Bool) -> WebRoutes {
        var routes = WebRoutes()
        routes.add("/metrics") { _ in WebRoutes.ok(registry.render(), contentType: PrometheusText.contentType) }
        routes.add("/healthz") { _ in
            isHealthy()
                ? WebRoutes.ok("ok\n", contentType: "text/plain; charset=utf-8")
                : HTTPResponse.plainText(statusCode: 503, text: "unavailable")
        }
        return routes
    }

    /// Starts listening.
    /// - Throws: `SocketError` when the address cannot be bound (`EADDRINUSE`, say).
    public func start() throws(SocketError) { try listener?.start() }

    /// Stops accepting connections.
    public func stop() { listener?.stop() }

    /// The port listened on (the kernel's choice for port 0), once started.
    public var port: UInt16 { listener?.port ?? 0 }

    /// The one place an upgrade to WebSocket is decided. Today every upgrade is refused: `404` (the
    /// chat at `/chat` is not served yet). The chat over WebSocket is accepted here, for `/chat`
    /// (with its `Origin` check), and its sessions are made in
    /// ``listener(_:didAccept:request:)``.
    public func upgradeDecision(for request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        .refuse(statusCode: 404, text: "no WebSocket at \(WebRoutes.path(of: request.target))")
    }

    // MARK: WebSocketListenerDelegate, on the server's queue

    public func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        upgradeDecision(for: request)
    }

    public func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        webSocket.close()  // nothing is accepted yet (upgradeDecision(for:))
    }

    public func listener(_ listener: WebSocketListener, didReceive request: HTTPRequestHead, on socket: TCPSocket) {
        socket.write(Data(routes.respond(to: request).bytes), withTimeout: -1, tag: 0)
        socket.disconnectAfterWriting()
    }
}
