/// Why a server refuses a WebSocket upgrade request (RFC 6455 §4.2.1, §4.2.2), with the HTTP answer to send
/// before closing: `statusCode` (400, 403 or 426) and `response`.
public enum WebSocketUpgradeRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The method is not `GET` (§4.2.1 item 1): 400. Carries the method.
    case methodNotGet(String)
    /// The request line's version is below HTTP/1.1 (§4.2.1 item 1): 400.
    case httpVersionTooOld(HTTPVersion)
    /// No `Host` field (§4.2.1 item 2): 400.
    case missingHost
    /// `Upgrade` lacks the token `websocket` (§4.2.1 item 3): 400.
    case missingUpgradeToken
    /// `Connection` lacks the token `upgrade` (§4.2.1 item 4): 400.
    case missingConnectionToken
    /// `Sec-WebSocket-Version` is missing or not `13` (§4.2.1 item 6): 426 with
    /// `Sec-WebSocket-Version: 13` (§4.2.2 item 4). Carries the value received, if any.
    case unsupportedWebSocketVersion(String?)
    /// No `Sec-WebSocket-Key` (§4.2.1 item 5): 400.
    case missingKey
    /// `Sec-WebSocket-Key` is not the base64 of 16 bytes (§4.2.1 item 5): 400. Carries the value.
    case invalidKey(String)
    /// A field that may occur once occurs more often (`Sec-WebSocket-Key`, `Sec-WebSocket-Version`,
    /// `Origin`): 400. Carries the name.
    case duplicateField(String)
    /// `Content-Length` (other than 0) or `Transfer-Encoding` on the upgrade GET: a body, which the
    /// handshake does not allow (its bytes would be read as frames): 400.
    case bodyNotAllowed
    /// `Sec-WebSocket-Protocol` is not a comma-separated list of tokens (§4.1 item 10, §11.3.4): 400.
    case invalidSubprotocols
    /// `Sec-WebSocket-Extensions` does not follow RFC 6455 §9.1: 400.
    case invalidExtensions
    /// The application refuses the request, e.g. for its `Origin` (§4.2.2 item 1, §10.2): 403. Carries
    /// the text of the answer's body.
    case forbidden(String)

    /// The status to answer with: 426 for the WebSocket version, 403 for `forbidden`, 400 otherwise.
    public var statusCode: Int {
        switch self {
        case .unsupportedWebSocketVersion: 426
        case .forbidden: 403
        default: 400
        }
    }

    /// The answer: `HTTPResponse.plainText` with `statusCode` and `description`; a 426 also carries
    /// `Sec-WebSocket-Version: 13` (and, as RFC 9110 §15.5.22 asks, `Upgrade: websocket`).
    public var response: HTTPResponse {
        let extra: HTTPHeaders =
            statusCode == 426 ? [("Upgrade", "websocket"), ("Sec-WebSocket-Version", WebSocketHandshake.version)] : []
        return HTTPResponse.plainText(statusCode: statusCode, text: description, extraHeaders: extra)
    }

    /// One English line, the body of the answer.
    public var description: String {
        switch self {
        case let .methodNotGet(method): "WebSocket upgrade needs GET, not \(method)"
        case let .httpVersionTooOld(version): "WebSocket upgrade needs HTTP/1.1, not \(version)"
        case .missingHost: "missing Host header"
        case .missingUpgradeToken: "Upgrade header lacks the token websocket"
        case .missingConnectionToken: "Connection header lacks the token upgrade"
        case let .unsupportedWebSocketVersion(value):
            value.map { "unsupported Sec-WebSocket-Version \($0), only 13" } ?? "missing Sec-WebSocket-Version, only 13"
        case .missingKey: "missing Sec-WebSocket-Key"
        case let .invalidKey(key): "Sec-WebSocket-Key \(key) is not the base64 of 16 bytes"
        case let .duplicateField(name): "more than one \(name) header"
        case .bodyNotAllowed: "WebSocket upgrade request with a body"
        case .invalidSubprotocols: "Sec-WebSocket-Protocol is not a list of tokens"
        case .invalidExtensions: "malformed Sec-WebSocket-Extensions"
        case let .forbidden(text): text
        }
    }
}
