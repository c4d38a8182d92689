import AsyncSocket
import ChatServer
import Dispatch
import Foundation
import Metrics
import SocketFraming
import WebSocket

/// `im-server --web-port`: one HTTP port, served through WebSocket's ``WebSocketListener``: the web
/// client's files (``StaticFiles``), the operator's endpoints (`GET /metrics`, `GET /healthz`) in a
/// route table (``WebRoutes``), and the chat over WebSocket at ``chatPath`` (docs/PROTOCOL.md
/// "WebSocket"): each upgrade there whose `Origin` is allowed (``origins``) becomes a session of the
/// chat server's own (``ChatServer/adoptWebSocket(_:request:responseHeaders:)``), the same kind as a TCP client's.
///
/// Each ordinary request is answered and its connection closed (`Connection: close`). Every answer
/// on the port carries ``WebRoutes/securityHeaders``: the route table's, the listener's own refusals
/// (`400`, `403`, `404`, `426`, `431`, `505`: its `responseHeaders`) and the chat's (`101`, `503`:
/// ``ChatServer/adoptWebSocket(_:request:responseHeaders:)``). Upgrades are decided in one place,
/// ``upgradeDecision(for:)``. Delegate calls run on a queue of its own.
public final class ChatWebServer: WebSocketListenerDelegate, @unchecked Sendable {
    /// The request target of the chat over WebSocket.
    public static let chatPath = "/chat"
    /// The routes: the web client's files, `/metrics` and `/healthz` (``operatorRoutes(metrics:isHealthy:)``),
    /// then what the app adds.
    public let routes: WebRoutes
    /// The chat server upgrades at ``chatPath`` join; nil: none are accepted (`404`).
    public let chat: ChatServer?
    private let allowedOrigins: [String]
    private let host: String
    /// Whether every connection is TLS (`https://`, `wss://`): made with server TLS settings.
    public let isSecure: Bool
    private let queue = DispatchQueue(label: "IMChat.ChatWebServer")
    private var listener: WebSocketListener?

    /// A web server for `chat` on `host`:`port` (0: a free one), not listening yet: call ``start()``.
    /// It serves `files` (default: the bundled web client, ``StaticFiles/bundled``) and accepts the
    /// chat at ``chatPath`` from its own origin and from `allowedOrigins` (``WebOrigins``: `im-server
    /// --web-allow-origin`). With `tls` (server settings: `im-server --tls-cert/--tls-key`) everything
    /// is served over TLS: the page over `https://`, the chat over `wss://`, and the own origin is
    /// `https://host:port`.
    public convenience init(
        chat: ChatServer, host: String = "127.0.0.1", port: UInt16, allowedOrigins: [String] = [],
        files: StaticFiles = .bundled, tls: TLSConfiguration? = nil, group: EventLoopGroup = .shared
    ) {
        var routes = ChatWebServer.operatorRoutes(metrics: chat.metrics.registry, isHealthy: { chat.isHealthy })
        files.add(to: &routes)
        self.init(routes: routes, chat: chat, host: host, port: port, allowedOrigins: allowedOrigins, tls: tls, group: group)
    }

    /// A web server answering with `routes` on `host`:`port` (0: a free one), not listening yet; with
    /// `chat`, upgrades at ``chatPath`` from an allowed origin become its sessions; with `tls`, over TLS
    /// (``isSecure``).
    public init(
        routes: WebRoutes, chat: ChatServer? = nil, host: String = "127.0.0.1", port: UInt16, allowedOrigins: [String] = [],
        tls: TLSConfiguration? = nil, group: EventLoopGroup = .shared
    ) {
        self.routes = routes
        self.chat = chat
        self.host = host
        self.allowedOrigins = allowedOrigins
        isSecure = tls != nil
        var configuration = WebSocketListener.Configuration(host: host, port: port)
        configuration.tls = tls
        configuration.responseHeaders = WebRoutes.securityHeaders
        listener = nil
        listener = WebSocketListener(configuration: configuration, delegate: self, delegateQueue: queue, group: group)
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

    /// The origins allowed to open the chat: this server's own (its interface and port, once started;
    /// `https` when ``isSecure``) and the allowed ones given.
    public var origins: WebOrigins { WebOrigins(host: host, port: port, isSecure: isSecure, extra: allowedOrigins) }

    /// The one place an upgrade to WebSocket is decided: at ``chatPath``, with a chat server, from an
    /// allowed `Origin` or none (``WebOrigins``): `.accept()`, the connection taken over from the
    /// listener to become a chat session (``listener(_:shouldTakeOver:)``); from another
    /// origin: `403 Forbidden` (cross-site WebSocket hijacking, ``WebOrigins``); another path (or no
    /// chat server): `404 Not Found`.
    public func upgradeDecision(for request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        let path = WebRoutes.path(of: request.target)
        guard path == Self.chatPath, chat != nil else { return .refuse(statusCode: 404, text: "no WebSocket at \(path)") }
        guard origins.allows(request.origin) else {
            return .refuse(statusCode: 403, text: "the origin \(request.origin ?? "") may not open the chat")
        }
        return .accept()
    }

    // MARK: WebSocketListenerDelegate, on the server's queue

    /// Every upgrade ``upgradeDecision(for:)`` accepts becomes a chat session: taken over.
    public func listener(_ listener: WebSocketListener, shouldTakeOver request: WebSocketUpgradeRequest) -> Bool {
        upgradeDecision(for: request) == .accept()
    }

    /// Asked for the upgrades not taken over: their refusal.
    public func listener(_ listener: WebSocketListener, shouldAccept request: WebSocketUpgradeRequest) -> WebSocketUpgradeDecision {
        upgradeDecision(for: request)
    }

    public func listener(_ listener: WebSocketListener, didTakeOver socket: TCPSocket, request: WebSocketUpgradeRequest) {
        guard let chat else { return socket.disconnect() }
        chat.adoptWebSocket(socket, request: request, responseHeaders: WebRoutes.securityHeaders)
    }

    public func listener(_ listener: WebSocketListener, didAccept webSocket: WebSocket, request: WebSocketUpgradeRequest) {
        webSocket.close()  // never: every upgrade accepted is taken over (upgradeDecision(for:))
    }

    public func listener(_ listener: WebSocketListener, didReceive request: HTTPRequestHead, on socket: TCPSocket) {
        socket.write(Data(routes.respond(to: request).bytes), withTimeout: -1, tag: 0)
        socket.disconnectAfterWriting()
    }
}
