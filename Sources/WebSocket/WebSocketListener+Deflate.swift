import SocketFraming

extension WebSocketListener.Configuration {
    /// The protocol handler of the connection `request` opens and the extensions to answer with
    /// (`Sec-WebSocket-Extensions` of the 101): permessage-deflate when ``deflate`` is set and the
    /// client offered it acceptably (RFC 7692 §5: the first acceptable offer wins; offers that are not
    /// acceptable are declined, and the connection goes on without compression); otherwise none.
    func negotiate(_ request: WebSocketUpgradeRequest) -> (WebSocketProtocolHandler, [WebSocketExtension]) {
        var handler = connection
        guard let deflate, case let .accepted(agreement, response, _) = deflate.negotiate(request.extensions) else {
            return (handler, [])
        }
        handler.enablePerMessageDeflate(agreement)
        return (handler, [response])
    }
}

extension WebSocket {
    /// The extensions in use, as the server's `Sec-WebSocket-Extensions` answer named them (RFC 6455
    /// §9.1): `permessage-deflate` with its agreed parameters when compression is on, else empty. Known
    /// on an accepted WebSocket from ``WebSocketListenerDelegate/listener(_:didAccept:request:)`` on, on a
    /// client from ``WebSocketDelegate/webSocketDidOpen(_:subprotocol:extensions:)`` on. Any thread.
    public var extensions: [WebSocketExtension] { agreedExtensions }
}
