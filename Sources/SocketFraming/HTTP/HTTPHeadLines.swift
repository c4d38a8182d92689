/// Reads the lines `HTTPHeadScanner` cut: start lines (RFC 9112 §3, §4) and field lines (RFC 9112 §5).
enum HTTPHeadLines {
    /// A request head from its lines; checks `Host` as RFC 9112 §3.2 requires.
    static func request(_ lines: [[UInt8]]) throws(HTTPParseError) -> HTTPRequestHead {
        guard let startLine = lines.first else { throw .invalidRequestLine }
        let parts = startLine.split(separator: HTTPSyntax.space, omittingEmptySubsequences: false)
        guard parts.count == 3, HTTPSyntax.isToken(parts[0]), !parts[1].isEmpty, parts[1].allSatisfy(HTTPSyntax.isVisible)
        else { throw .invalidRequestLine }
        let head = HTTPRequestHead(
            method: string(parts[0]), target: string(parts[1]), version: try version(parts[2]),
            headers: try headers(lines.dropFirst()))
        let hosts = head.headers.values(for: "Host").count
        guard hosts <= 1 else { throw .duplicateHost }
        guard hosts == 1 || head.version < .http1_1 else { throw .missingHost }
        return head
    }

    /// A response head from its lines.
    static func response(_ lines: [[UInt8]]) throws(HTTPParseError) -> HTTPResponseHead {
        guard let startLine = lines.first, startLine.count >= 12, startLine[8] == HTTPSyntax.space else {
            throw .invalidStatusLine
        }
        let code = startLine[9..<12]
        guard code.allSatisfy(HTTPSyntax.isDigit), code.first != UInt8(ascii: "0"),
            startLine.count == 12 || startLine[12] == HTTPSyntax.space
        else { throw .invalidStatusLine }
        let statusCode = code.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return HTTPResponseHead(
            statusCode: statusCode, reason: string(startLine.dropFirst(13)), version: try version(startLine[0..<8]),
            headers: try headers(lines.dropFirst()))
    }

    /// HTTP-version (RFC 9112 §2.3): `HTTP/` DIGIT `.` DIGIT, case-sensitive; a major version other than 1
    /// is `unsupportedVersion`.
    static func version(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPVersion {
        let text = Array(bytes)
        guard text.count == 8, text[0..<5].elementsEqual("HTTP/".utf8), HTTPSyntax.isDigit(text[5]),
            text[6] == UInt8(ascii: "."), HTTPSyntax.isDigit(text[7])
        else { throw .invalidVersion }
        let version = HTTPVersion(major: Int(text[5] - UInt8(ascii: "0")), minor: Int(text[7] - UInt8(ascii: "0")))
        guard version.major == 1 else { throw .unsupportedVersion(version) }
        return version
    }

    /// Field lines: `field-name ":" OWS field-value OWS`, the name a token with no whitespace before the
    /// colon; a line starting with whitespace is obsolete line folding.
    static func headers(_ lines: ArraySlice<[UInt8]>) throws(HTTPParseError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for line in lines {
            guard let first = line.first, !HTTPSyntax.isWhitespace(first) else { throw .obsoleteLineFolding }
            guard let colon = line.firstIndex(of: HTTPSyntax.colon) else { throw .missingColon }
            let name = line[..<colon]
            guard HTTPSyntax.isToken(name) else { throw .invalidFieldName(string(name)) }
            var value = line[(colon + 1)...]
            while let byte = value.first, HTTPSyntax.isWhitespace(byte) { value.removeFirst() }
            while let byte = value.last, HTTPSyntax.isWhitespace(byte) { value.removeLast() }
            headers.append(name: string(name), value: string(value))
        }
        return headers
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
}
