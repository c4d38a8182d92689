/// Why an HTTP/1.1 head (RFC 9112) was refused. Each case carries the status a server answers a request
/// with (`statusCode`: 400, 431 or 505); `response` is that answer. After one, close the connection.
public enum HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The head has more than `limitBytes` bytes (start line through the empty line, CRLFs included)
    /// without ending: 431 (RFC 6585 §5).
    case headTooLarge(limitBytes: Int)
    /// The head has more than `limit` field lines: 431.
    case tooManyHeaderFields(limit: Int)
    /// A line ended with a lone LF: only CRLF ends a line here (RFC 9112 §2.2 allows, does not require,
    /// accepting a bare LF; refusing it keeps every peer's idea of where the head ends the same): 400.
    case bareLineFeed
    /// A CR not followed by LF (RFC 9112 §2.2): 400.
    case bareCarriageReturn
    /// A control byte (NUL, DEL, …) where none may be (RFC 9110 §5.5), at `offset` from the head's start: 400.
    case invalidByte(UInt8, offset: Int)
    /// The request line is not `method SP request-target SP HTTP-version` (RFC 9112 §3), or the method is
    /// not a token, or the target holds other than visible ASCII: 400.
    case invalidRequestLine
    /// The status line is not `HTTP-version SP 3DIGIT [SP reason]` (RFC 9112 §4): 400.
    case invalidStatusLine
    /// The version is not `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3): 400.
    case invalidVersion
    /// A version whose major number is not 1, e.g. HTTP/2.0 in an HTTP/1 head: 505 (RFC 9110 §15.6.6).
    case unsupportedVersion(HTTPVersion)
    /// A field line starts with whitespace: obsolete line folding (RFC 9112 §5.2), refused: 400.
    case obsoleteLineFolding
    /// A field line has no colon: 400.
    case missingColon
    /// A field name that is not a token (RFC 9110 §5.1), including whitespace before the colon
    /// (RFC 9112 §5.1): 400. Carries the name as received (lossy UTF-8).
    case invalidFieldName(String)
    /// More than one `Host` field line (RFC 9112 §3.2): 400.
    case duplicateHost
    /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2): 400.
    case missingHost

    /// The status a server answers with: 431 for the size limits, 505 for a version other than 1.x, 400
    /// for the rest.
    public var statusCode: Int {
        switch self {
        case .headTooLarge, .tooManyHeaderFields: 431
        case .unsupportedVersion: 505
        default: 400
        }
    }

    /// The answer to send before closing: `HTTPResponse.plainText` with `statusCode` and `description`.
    public var response: HTTPResponse { HTTPResponse.plainText(statusCode: statusCode, text: description) }

    /// One English line, e.g. "HTTP head exceeds 8192 bytes".
    public var description: String {
        switch self {
        case let .headTooLarge(limit): "HTTP head exceeds \(limit) bytes"
        case let .tooManyHeaderFields(limit): "HTTP head has more than \(limit) header fields"
        case .bareLineFeed: "line ended by LF without CR"
        case .bareCarriageReturn: "CR not followed by LF"
        case let .invalidByte(byte, offset): "invalid byte 0x\(String(byte, radix: 16)) at offset \(offset) of the head"
        case .invalidRequestLine: "malformed request line"
        case .invalidStatusLine: "malformed status line"
        case .invalidVersion: "malformed HTTP version"
        case let .unsupportedVersion(version): "unsupported version \(version)"
        case .obsoleteLineFolding: "obsolete line folding"
        case .missingColon: "header field line without a colon"
        case let .invalidFieldName(name): "invalid header field name \"\(name)\""
        case .duplicateHost: "more than one Host header field"
        case .missingHost: "HTTP/1.1 request without a Host header field"
        }
    }
}
