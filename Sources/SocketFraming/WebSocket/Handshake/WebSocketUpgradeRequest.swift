/// A valid WebSocket upgrade request (RFC 6455 §4.2.1), as `WebSocketServerHandshake.validate(_:)` reads it:
/// what the application decides on (target, `Origin`, subprotocols, extensions) before it answers with
/// `accept(subprotocol:extensions:extraHeaders:)` or a refusal.
public struct WebSocketUpgradeRequest: Equatable, Sendable {
    /// The whole request head, for any other field the application wants (cookies, authorization).
    public var head: HTTPRequestHead
    /// The resource the client asks for: the request target, e.g. `/chat?room=1` (§4.2.1 item 1).
    public var target: String { head.target }
    /// The `Host` field's value (§4.2.1 item 2).
    public var host: String
    /// `Sec-WebSocket-Key`, the 24 base64 characters as received (§4.2.1 item 5).
    public var key: String
    /// `Origin`, sent by browsers (§4.2.1 item 7, §10.2): the application decides whether to accept it
    /// (refuse with `WebSocketUpgradeRefusal.forbidden`). Nil when absent.
    public var origin: String?
    /// The subprotocols the client offers, in its order of preference (`Sec-WebSocket-Protocol`, §4.2.1
    /// item 8); empty when none.
    public var subprotocols: [String]
    /// The extensions the client offers, in order (`Sec-WebSocket-Extensions`, §4.2.1 item 9, §9.1);
    /// several offers of one extension are alternatives (RFC 7692 §5).
    public var extensions: [WebSocketExtension]

    /// `Sec-WebSocket-Accept` for `key` (§4.2.2 item 5.4).
    public var acceptValue: String { WebSocketHandshake.acceptValue(forKey: key) }

    /// The 101 Switching Protocols answer (§4.2.2 item 5): `Upgrade: websocket`, `Connection: Upgrade`,
    /// `Sec-WebSocket-Accept`, then `Sec-WebSocket-Protocol: subprotocol` and `Sec-WebSocket-Extensions`
    /// when given, then `extraHeaders` (e.g. `Set-Cookie`). After it the connection speaks frames.
    /// - Precondition: `subprotocol` is nil or one the client offered (§4.2.2 item 5.5); `accepted` are
    ///   valid header elements (`WebSocketExtension.isValidHeaderElement`); `extraHeaders`
    ///   names are tokens and values hold no CR, LF or NUL (programmer errors).
    public func accept(
        subprotocol: String? = nil, extensions accepted: [WebSocketExtension] = [], extraHeaders: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponseHead {
        precondition(subprotocol.map { subprotocols.contains($0) } ?? true, "the subprotocol must be one the client offered")
        var headers: HTTPHeaders = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", acceptValue)]
        if let subprotocol { headers.append(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        if !accepted.isEmpty { headers.append(name: "Sec-WebSocket-Extensions", value: WebSocketExtension.headerValue(accepted)) }
        for field in extraHeaders {
            precondition(HTTPHeaders.isValidField(field), "invalid header field \(field.name)")
            headers.append(name: field.name, value: field.value)
        }
        return HTTPResponseHead(statusCode: 101, headers: headers)
    }
}
