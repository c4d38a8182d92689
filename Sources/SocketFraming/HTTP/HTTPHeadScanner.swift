/// Cuts a byte stream into the lines of one HTTP/1.1 head, byte by byte, until the empty line that ends it
/// (RFC 9112 §2.1), holding the head's size and field count to their limits as bytes arrive.
///
/// Lines end with CRLF only; a bare LF, a CR not followed by LF, and any control byte but HTAB are refused
/// at once (RFC 9112 §2.2, RFC 9110 §5.5). Empty lines before the start line are skipped (RFC 9112 §2.2),
/// their bytes counted against the limit.
struct HTTPHeadScanner {
    let maxHeadBytes: Int
    let maxHeaderFields: Int
    /// The complete lines so far, without their CRLF; the first is the start line.
    private(set) var lines: [[UInt8]] = []
    private var line: [UInt8] = []
    private var scannedBytes = 0
    private var afterCR = false

    init(maxHeadBytes: Int, maxHeaderFields: Int) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderFields = maxHeaderFields
    }

    /// Scans `bytes` in order; returns how many of them belong to the head when its empty line has
    /// arrived (then `lines` is complete and no more bytes may be scanned), or nil when all of them did and
    /// more are needed.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> Int? {
        for (index, byte) in bytes.enumerated() {
            if try scanByte(byte) { return index + 1 }
        }
        return nil
    }

    /// Scans one byte; true when it ended the head.
    private mutating func scanByte(_ byte: UInt8) throws(HTTPParseError) -> Bool {
        let offset = scannedBytes
        scannedBytes += 1
        guard scannedBytes <= maxHeadBytes else { throw .headTooLarge(limitBytes: maxHeadBytes) }
        if afterCR {
            guard byte == HTTPSyntax.lf else { throw .bareCarriageReturn }
            afterCR = false
            return try endLine()
        }
        switch byte {
        case HTTPSyntax.cr: afterCR = true
        case HTTPSyntax.lf: throw .bareLineFeed
        case _ where !HTTPSyntax.isFieldValueByte(byte): throw .invalidByte(byte, offset: offset)
        default: line.append(byte)
        }
        return false
    }

    private mutating func endLine() throws(HTTPParseError) -> Bool {
        if line.isEmpty { return !lines.isEmpty }
        guard lines.count <= maxHeaderFields else { throw .tooManyHeaderFields(limit: maxHeaderFields) }
        lines.append(line)
        line = []
        return false
    }
}
