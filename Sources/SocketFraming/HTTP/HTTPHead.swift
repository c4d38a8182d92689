/// An HTTP version, `HTTP/major.minor` (RFC 9112 §2.3: one digit each).
public struct HTTPVersion: Equatable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The major version, 0–9.
    public var major: Int
    /// The minor version, 0–9.
    public var minor: Int

    /// The version `major.minor`.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1, the version WebSocket's handshake needs (RFC 6455 §4.1).
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// Orders by major, then minor version.
    public static func < (lhs: HTTPVersion, rhs: HTTPVersion) -> Bool { (lhs.major, lhs.minor) < (rhs.major, rhs.minor) }

    /// `HTTP/1.1`, as on the wire.
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// The head of an HTTP/1.1 request (RFC 9112 §3): request line and header fields, without the body.
public struct HTTPRequestHead: Equatable, Sendable {
    /// The method, a token, case-sensitive (RFC 9110 §9.1): `GET`.
    public var method: String
    /// The request target as sent (RFC 9112 §3.2), usually origin-form: `/chat?room=1`.
    public var target: String
    /// The version of the request line.
    public var version: HTTPVersion
    /// The header fields in order.
    public var headers: HTTPHeaders

    /// A request head.
    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The head as it goes on the wire: request line, field lines, empty line, each ended by CRLF.
    public var bytes: [UInt8] { HTTPHeadWriter.head(startLine: "\(method) \(target) \(version)", headers: headers) }
}

/// The head of an HTTP/1.1 response (RFC 9112 §4): status line and header fields, without the body.
public struct HTTPResponseHead: Equatable, Sendable {
    /// The version of the status line.
    public var version: HTTPVersion
    /// The status code, 100–999 on the wire (three digits, RFC 9110 §15).
    public var statusCode: Int
    /// The reason phrase, possibly empty; it carries no meaning (RFC 9112 §4).
    public var reason: String
    /// The header fields in order.
    public var headers: HTTPHeaders

    /// A response head; `reason` defaults to the standard phrase of `statusCode` (RFC 9110 §15), if known.
    public init(statusCode: Int, reason: String? = nil, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.version = version
        self.statusCode = statusCode
        self.reason = reason ?? HTTPResponseHead.standardReason(statusCode)
        self.headers = headers
    }

    /// The head as it goes on the wire: status line, field lines, empty line, each ended by CRLF.
    public var bytes: [UInt8] { HTTPHeadWriter.head(startLine: "\(version) \(statusCode) \(reason)", headers: headers) }

    /// The reason phrase RFC 9110 §15 (and RFC 6585 §5 for 431) gives `statusCode`, or "" for codes this
    /// library does not send.
    public static func standardReason(_ statusCode: Int) -> String {
        switch statusCode {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }
}

/// Serialises heads.
enum HTTPHeadWriter {
    static func head(startLine: String, headers: HTTPHeaders) -> [UInt8] {
        var bytes = Array(startLine.utf8) + [HTTPSyntax.cr, HTTPSyntax.lf]
        for field in headers {
            bytes += Array(field.name.utf8) + [HTTPSyntax.colon, HTTPSyntax.space] + Array(field.value.utf8)
            bytes += [HTTPSyntax.cr, HTTPSyntax.lf]
        }
        return bytes + [HTTPSyntax.cr, HTTPSyntax.lf]
    }
}
