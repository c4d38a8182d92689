/// A whole HTTP/1.1 response a server sends before closing or switching protocols: a head and a body
/// of `Content-Length` bytes.
public struct HTTPResponse: Equatable, Sendable {
    /// The status line and header fields.
    public var head: HTTPResponseHead
    /// The body, `head`'s `Content-Length` bytes.
    public var body: [UInt8]

    /// A response of `head` and `body`, as given (no header is added).
    public init(head: HTTPResponseHead, body: [UInt8] = []) {
        self.head = head
        self.body = body
    }

    /// The response on the wire: head, then body.
    public var bytes: [UInt8] { head.bytes + body }

    /// An error answer after which the server closes the connection: `statusCode` with its standard
    /// reason, `Content-Type: text/plain; charset=utf-8`, `Content-Length`, `Connection: close`, then
    /// `extraHeaders` (e.g. `Sec-WebSocket-Version: 13` on a 426), and `text` plus a line feed as the body.
    public static func plainText(statusCode: Int, text: String, extraHeaders: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        closing(
            statusCode: statusCode, contentType: "text/plain; charset=utf-8", body: Array((text + "\n").utf8), extraHeaders: extraHeaders)
    }

    /// An answer after which the server closes the connection: `statusCode` with its standard reason,
    /// `Content-Type: contentType`, `Content-Length` of `body`, `Connection: close`, then `extraHeaders`,
    /// and `body`.
    public static func closing(
        statusCode: Int, contentType: String, body: [UInt8], extraHeaders: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var headers: HTTPHeaders = [("Content-Type", contentType), ("Content-Length", String(body.count)), ("Connection", "close")]
        for field in extraHeaders { headers.append(name: field.name, value: field.value) }
        return HTTPResponse(head: HTTPResponseHead(statusCode: statusCode, headers: headers), body: body)
    }
}
