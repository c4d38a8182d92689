import SocketFraming

/// The web port's route table: what each path answers to each method, as values (no socket), so it is
/// tested without one. ``ChatWebServer`` answers every ordinary HTTP request with ``respond(to:)``.
///
/// Add a page with ``add(_:method:_:)`` (the web client's files: ``StaticFiles``). Upgrades to WebSocket do not
/// come here: ``ChatWebServer/upgradeDecision(for:)`` decides them.
public struct WebRoutes: Sendable {
    /// Makes the answer to one request (called on the web server's delegate queue).
    public typealias Handler = @Sendable (HTTPRequestHead) -> HTTPResponse

    /// Path (without the query) → method → handler.
    private var table: [String: [String: Handler]] = [:]

    /// An empty table: every request is answered 404.
    public init() {}

    /// Answers `method` requests for `path` (exactly, without the query: `/metrics`) with `handler`.
    public mutating func add(_ path: String, method: String = "GET", _ handler: @escaping Handler) {
        table[path, default: [:]][method] = handler
    }

    /// The fields every answer of the table carries (``securityHeaders``): `X-Content-Type-Options:
    /// nosniff` (a browser never guesses another type than the one given, so a text answer is never run
    /// as a script), `Referrer-Policy: no-referrer` (no page's address leaves with a request), and
    /// `Content-Security-Policy` (W3C CSP Level 3): the page's scripts, styles, images and connections
    /// from its own origin only (no inline script or style, no third-party origin, no plugin), no
    /// `<base>`, and no framing by another page (clickjacking). `connect-src 'self'` covers the page's
    /// own WebSocket (`ws://` and `wss://` to the same host and port: CSP Level 3's "Does url match
    /// expression in origin" lets `'self'` match them as it matches `http`/`https`, as Chromium and
    /// Firefox do; older WebKit did not), and no other.
    public static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        + "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

    /// See ``contentSecurityPolicy``: the fields in the order they are appended.
    public static let securityHeaders: HTTPHeaders = [
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy", contentSecurityPolicy)
    ]

    /// The answer to `request`: its route's, `405 Method Not Allowed` with `Allow` (RFC 9110 §15.5.6)
    /// when the path is routed for other methods only, else `404 Not Found`. A `HEAD` request of a path
    /// routed for `GET` gets the `GET` answer's status and fields without its body (RFC 9110 §9.3.2: a
    /// load balancer's `HEAD /healthz`, `curl -I`). Every answer carries ``securityHeaders``.
    public func respond(to request: HTTPRequestHead) -> HTTPResponse {
        var response: HTTPResponse
        let path = WebRoutes.path(of: request.target)
        if let methods = table[path] {
            let isHead = request.method == "HEAD" && methods["HEAD"] == nil
            if let handler = isHead ? methods["GET"] : methods[request.method] {
                response = handler(request)
                if isHead { response.body = [] }
            } else {
                var allowed = Set(methods.keys)
                if allowed.contains("GET") { allowed.insert("HEAD") }
                response = HTTPResponse.plainText(
                    statusCode: 405, text: "\(request.method) is not allowed on \(path)",
                    extraHeaders: [("Allow", allowed.sorted().joined(separator: ", "))])
            }
        } else {
            response = HTTPResponse.plainText(statusCode: 404, text: "nothing at \(path)")
        }
        for field in Self.securityHeaders { response.head.headers.append(name: field.name, value: field.value) }
        return response
    }

    /// The path of a request target: up to a `?` or `#` (RFC 9112 §3.2.1's origin-form).
    static func path(of target: String) -> String {
        String(target.prefix { $0 != "?" && $0 != "#" })
    }

    /// A `200 OK` with `body` as `contentType`, `Content-Length`, and `Connection: close`.
    public static func ok(_ body: String, contentType: String) -> HTTPResponse {
        HTTPResponse.closing(statusCode: 200, contentType: contentType, body: Array(body.utf8))
    }
}
