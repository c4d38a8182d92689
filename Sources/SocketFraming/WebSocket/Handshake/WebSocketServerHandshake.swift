/// What a server makes of a request head: a WebSocket upgrade to answer, an ordinary HTTP request for the
/// application (one port can serve a page and the socket), or an upgrade it must refuse.
public enum WebSocketUpgradeValidation: Equatable, Sendable {
    /// A valid upgrade request; answer it with `accept(…)` or refuse it (`forbidden` for its `Origin`).
    case upgrade(WebSocketUpgradeRequest)
    /// Not an attempt at a WebSocket upgrade: no `Upgrade` token `websocket`, no `Sec-WebSocket-Key` and
    /// no `Sec-WebSocket-Version`. Hand it to the application as an ordinary request.
    case notUpgrade(HTTPRequestHead)
    /// An attempt at an upgrade that breaks RFC 6455 §4.2.1: send `refusal.response`, then close.
    case refused(WebSocketUpgradeRefusal)
}

/// The server's side of the opening handshake (RFC 6455 §4.2): checks a parsed request head.
///
///     GET /chat HTTP/1.1
///     Host: server.example.com
///     Upgrade: websocket
///     Connection: Upgrade
///     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==
///     Origin: http://example.com
///     Sec-WebSocket-Protocol: chat, superchat
///     Sec-WebSocket-Version: 13
///
/// is `.upgrade` with target `/chat`, origin `http://example.com`, subprotocols `chat`, `superchat`
/// (RFC 6455 §1.2); its `accept(subprotocol: "chat")` is the §1.2 answer.
public enum WebSocketServerHandshake {
    /// Reads `head` (§4.2.1), checking in this order: method `GET`; version HTTP/1.1 or later; `Host`;
    /// `Upgrade` holding the token `websocket` and `Connection` the token `upgrade` (each a
    /// comma-separated list, any case, several fields joined); `Sec-WebSocket-Version` exactly `13` (else
    /// 426); one `Sec-WebSocket-Key`, the base64 of 16 bytes; no body (`Transfer-Encoding`, or
    /// `Content-Length` other than 0); `Sec-WebSocket-Protocol` tokens; `Sec-WebSocket-Extensions` per
    /// §9.1; at most one `Origin`.
    public static func validate(_ head: HTTPRequestHead) -> WebSocketUpgradeValidation {
        let headers = head.headers
        guard
            headers.containsToken("websocket", for: "Upgrade") || headers.contains("Sec-WebSocket-Key")
                || headers.contains("Sec-WebSocket-Version")
        else { return .notUpgrade(head) }
        do {
            return .upgrade(try upgradeRequest(head))
        } catch {
            return .refused(error)
        }
    }

    private static func upgradeRequest(_ head: HTTPRequestHead) throws(WebSocketUpgradeRefusal) -> WebSocketUpgradeRequest {
        let headers = head.headers
        guard head.method == "GET" else { throw .methodNotGet(head.method) }
        guard head.version >= .http1_1 else { throw .httpVersionTooOld(head.version) }
        guard let host = headers.first("Host") else { throw .missingHost }
        guard headers.containsToken("websocket", for: "Upgrade") else { throw .missingUpgradeToken }
        guard headers.containsToken("upgrade", for: "Connection") else { throw .missingConnectionToken }
        let versions = headers.values(for: "Sec-WebSocket-Version")
        guard versions.count <= 1 else { throw .duplicateField("Sec-WebSocket-Version") }
        guard versions.first == WebSocketHandshake.version else { throw .unsupportedWebSocketVersion(versions.first) }
        let keys = headers.values(for: "Sec-WebSocket-Key")
        guard keys.count <= 1 else { throw .duplicateField("Sec-WebSocket-Key") }
        guard let key = keys.first else { throw .missingKey }
        guard WebSocketHandshake.isValidKey(key) else { throw .invalidKey(key) }
        guard !headers.contains("Transfer-Encoding"), headers.values(for: "Content-Length").allSatisfy({ $0 == "0" }) else {
            throw .bodyNotAllowed
        }
        let origins = headers.values(for: "Origin")
        guard origins.count <= 1 else { throw .duplicateField("Origin") }
        let subprotocols = headers.tokens(for: "Sec-WebSocket-Protocol")
        guard subprotocols.allSatisfy(HTTPSyntax.isToken) else { throw .invalidSubprotocols }
        guard let extensions = WebSocketExtension.parse(headers.values(for: "Sec-WebSocket-Extensions")) else {
            throw .invalidExtensions
        }
        return WebSocketUpgradeRequest(
            head: head, host: host, key: key, origin: origins.first, subprotocols: subprotocols, extensions: extensions)
    }
}
