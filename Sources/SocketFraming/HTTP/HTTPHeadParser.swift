import Foundation

/// What feeding bytes to an HTTP head parser gave.
public enum HTTPHeadParseResult<Head: Sendable & Equatable>: Sendable, Equatable {
    /// The head has not ended yet: every byte fed was taken into it; feed more.
    case needMore
    /// The head ended inside the bytes just fed: `consumedBytes` of them (counted from the start of that
    /// call's bytes) belong to it, and the rest — a body, or a WebSocket's first frames — follow it.
    case complete(Head, consumedBytes: Int)
}

/// An incremental, bounded parser of one HTTP/1.1 request head (RFC 9112 §2–§5): feed it bytes as they
/// arrive, cut anywhere, even one at a time; it answers `.needMore` until the empty line ending the head,
/// then the parsed head and how many of the last bytes were the head's.
///
///     reads:   | "GET /chat HTTP/1.1\r\nHo" | "st: a\r\n\r" | "\n" 81 85 … |
///     results:   .needMore                   .needMore      .complete(head, consumedBytes: 1)
///                                                           (81 85 …, a first frame, left to the caller)
///
/// Every head byte is looked at once. At most `maxHeadBytes` bytes are held, however the head is cut;
/// one more without the end of the head throws `.headTooLarge` (431) at once, so a slow or endless head
/// costs its limit, not more. Lines end with CRLF only: a bare LF is refused (RFC 9112 §2.2 lets a
/// recipient accept it; refusing it keeps the end of the head where every other parser puts it), as are a
/// bare CR, NUL and other control bytes, obsolete line folding, field names that are not tokens, field
/// lines without a colon, versions other than `HTTP/1.x` (505), and `Host` missing from an HTTP/1.1
/// request or repeated. Empty lines before the request line are skipped (RFC 9112 §2.2).
///
/// The parser serves one head: after `.complete`, `feed` answers the same head with `consumedBytes: 0`;
/// after a throw, it throws the same error again. Neither traps, whatever it is fed.
public struct HTTPRequestHeadParser: Sendable {
    /// The default bound on a request head: 8 KiB (8192 bytes), as nginx's and Python `websockets`'
    /// default line buffers; a browser's upgrade request is 400–700 bytes.
    public static let defaultMaxHeadBytes = 8192
    /// The default bound on field lines: 100 (Python `websockets`' `MAX_NUM_HEADERS` is 128).
    public static let defaultMaxHeaderFields = 100

    private var core: HTTPHeadParserCore<HTTPRequestHead>

    /// A parser refusing heads over `maxHeadBytes` bytes (request line through the final CRLF) or with
    /// more than `maxHeaderFields` field lines.
    /// - Precondition: both limits are positive.
    public init(maxHeadBytes: Int = defaultMaxHeadBytes, maxHeaderFields: Int = defaultMaxHeaderFields) {
        core = HTTPHeadParserCore(
            maxHeadBytes: maxHeadBytes, maxHeaderFields: maxHeaderFields,
            read: { lines throws(HTTPParseError) in try HTTPHeadLines.request(lines) })
    }

    /// Takes `bytes`, the next bytes of the stream; see the type's documentation.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPHeadParseResult<HTTPRequestHead> {
        try core.feed(bytes)
    }

    /// Takes the readable bytes of `buffer` up to the end of the head, consuming them: the head when it
    /// ended there (what follows it stays readable), or nil when all readable bytes were taken and more are
    /// needed.
    public mutating func parse(_ buffer: inout FrameBuffer) throws(HTTPParseError) -> HTTPRequestHead? {
        try core.parse(&buffer)
    }
}

/// An incremental, bounded parser of one HTTP/1.1 response head (RFC 9112 §4), for a client reading the
/// answer to its upgrade request; it works as `HTTPRequestHeadParser` does, with a status line
/// (`HTTP/1.1 101 Switching Protocols`: version, three digits, an optional reason) instead of a request
/// line and no `Host` rule.
public struct HTTPResponseHeadParser: Sendable {
    /// The default bound on a response head: 8 KiB (8192 bytes).
    public static let defaultMaxHeadBytes = 8192
    /// The default bound on field lines: 100.
    public static let defaultMaxHeaderFields = 100

    private var core: HTTPHeadParserCore<HTTPResponseHead>

    /// A parser refusing heads over `maxHeadBytes` bytes or with more than `maxHeaderFields` field lines.
    /// - Precondition: both limits are positive.
    public init(maxHeadBytes: Int = defaultMaxHeadBytes, maxHeaderFields: Int = defaultMaxHeaderFields) {
        core = HTTPHeadParserCore(
            maxHeadBytes: maxHeadBytes, maxHeaderFields: maxHeaderFields,
            read: { lines throws(HTTPParseError) in try HTTPHeadLines.response(lines) })
    }

    /// Takes `bytes`, the next bytes of the stream; see `HTTPRequestHeadParser.feed(_:)`.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPHeadParseResult<HTTPResponseHead> {
        try core.feed(bytes)
    }

    /// Takes the readable bytes of `buffer` up to the end of the head; see `HTTPRequestHeadParser.parse(_:)`.
    public mutating func parse(_ buffer: inout FrameBuffer) throws(HTTPParseError) -> HTTPResponseHead? {
        try core.parse(&buffer)
    }
}

/// What both parsers share: the scanner, then reading its lines into a head, and the one-shot state.
struct HTTPHeadParserCore<Head: Sendable & Equatable>: Sendable {
    /// How the head ended, once it has.
    private enum Outcome {
        case complete(Head)
        case failed(HTTPParseError)
    }

    /// Kept apart from `outcome` so that scanning mutates it in place (no copy of its lines per call).
    private var scanner: HTTPHeadScanner
    private var outcome: Outcome?
    private let read: @Sendable ([[UInt8]]) throws(HTTPParseError) -> Head

    init(maxHeadBytes: Int, maxHeaderFields: Int, read: @escaping @Sendable ([[UInt8]]) throws(HTTPParseError) -> Head) {
        precondition(maxHeadBytes > 0 && maxHeaderFields > 0, "HTTP head limits must be positive")
        scanner = HTTPHeadScanner(maxHeadBytes: maxHeadBytes, maxHeaderFields: maxHeaderFields)
        self.read = read
    }

    mutating func feed(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPHeadParseResult<Head> {
        let scanned = bytes.withContiguousStorageIfAvailable { buffer in
            scan(UnsafeRawBufferPointer(buffer))
        }
        let result = try (scanned ?? Array(bytes).withUnsafeBytes { scan($0) }).get()
        return result
    }

    mutating func parse(_ buffer: inout FrameBuffer) throws(HTTPParseError) -> Head? {
        let result = try buffer.withUnsafeReadableBytes { scan($0) }.get()
        switch result {
        case .needMore:
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return nil
        case let .complete(head, consumed):
            buffer.moveReaderIndex(forwardBy: consumed)
            return head
        }
    }

    private mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Result<HTTPHeadParseResult<Head>, HTTPParseError> {
        switch outcome {
        case let .complete(head): return .success(.complete(head, consumedBytes: 0))
        case let .failed(error): return .failure(error)
        case nil:
            do {
                guard let consumed = try scanner.scan(bytes) else { return .success(.needMore) }
                let head = try read(scanner.lines)
                outcome = .complete(head)
                return .success(.complete(head, consumedBytes: consumed))
            } catch {
                outcome = .failed(error)
                return .failure(error)
            }
        }
    }
}
