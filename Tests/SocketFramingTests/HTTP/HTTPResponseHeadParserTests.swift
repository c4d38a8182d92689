import Foundation
import SocketFraming
import Testing

/// `HTTPResponseHeadParser` and `HTTPHeaders`' lookups.
@Suite struct HTTPResponseHeadParserTests {
    static let rfc6455Response =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n\r\n"

    @Test func the_rfc6455_example_response_parses_in_every_two_piece_cutting() throws {
        let head = HTTPResponseHead(
            statusCode: 101, reason: "Switching Protocols",
            headers: [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
                ("Sec-WebSocket-Protocol", "chat")
            ])
        let bytes = utf8(Self.rfc6455Response) + [0x81, 0x02, 0x68, 0x69]
        let headLength = bytes.count - 4
        for cut in 0..<headLength {
            var parser = HTTPResponseHeadParser()
            #expect(try parser.feed(bytes[..<cut]) == .needMore)
            #expect(try parser.feed(bytes[cut...]) == .complete(head, consumedBytes: headLength - cut))
        }
        #expect(head.bytes == utf8(Self.rfc6455Response))
    }

    @Test func a_status_line_without_a_reason_is_read() throws {
        var parser = HTTPResponseHeadParser()
        #expect(
            try parser.feed(utf8("HTTP/1.1 404\r\n\r\n")) == .complete(HTTPResponseHead(statusCode: 404, reason: ""), consumedBytes: 16))
        var spaced = HTTPResponseHeadParser()
        #expect(
            try spaced.feed(utf8("HTTP/1.0 302 \r\n\r\n"))
                == .complete(HTTPResponseHead(statusCode: 302, reason: "", version: .http1_0), consumedBytes: 17))
    }

    @Test(arguments: [
        ("HTTP/1.1 1010 X\r\n\r\n", HTTPParseError.invalidStatusLine),
        ("HTTP/1.1 10 X\r\n\r\n", .invalidStatusLine),
        ("HTTP/1.1 099 X\r\n\r\n", .invalidStatusLine),
        ("HTTP/1.1  101 X\r\n\r\n", .invalidStatusLine),
        ("HTTP/11 101 Switching\r\n\r\n", .invalidStatusLine),
        ("HTTP/1.x 101 Switching\r\n\r\n", .invalidVersion),
        ("HTTP/2.0 101 Switching\r\n\r\n", .unsupportedVersion(HTTPVersion(major: 2, minor: 0))),
        ("HTTP/1.1 101 OK\r\nUpgrade : websocket\r\n\r\n", .invalidFieldName("Upgrade ")),
        ("HTTP/1.1 101 OK\r\nUpgrade: websocket\n\r\n", .bareLineFeed)
    ])
    func a_malformed_response_head_is_refused(text: String, error: HTTPParseError) {
        var parser = HTTPResponseHeadParser()
        #expect(throws: error) { try parser.feed(utf8(text)) }
    }

    @Test func headers_are_looked_up_ignoring_case_and_read_as_token_lists() {
        let headers: HTTPHeaders = [("Connection", "keep-alive, Upgrade"), ("connection", " , close ,"), ("X", "1")]
        #expect(headers.values(for: "CONNECTION") == ["keep-alive, Upgrade", " , close ,"])
        #expect(headers.first("x") == "1")
        #expect(headers.tokens(for: "Connection") == ["keep-alive", "Upgrade", "close"])
        #expect(headers.containsToken("upgrade", for: "connection"))
        #expect(!headers.containsToken("upgrad", for: "connection"))
        #expect(!headers.contains("Upgrade"))
    }

    @Test func only_writable_fields_are_valid() {
        #expect(HTTPHeaders.isValidField(HTTPField(name: "X-Token", value: "a b\tc")))
        #expect(!HTTPHeaders.isValidField(HTTPField(name: "X-Token", value: "a\r\nInjected: 1")))
        #expect(!HTTPHeaders.isValidField(HTTPField(name: "X Token", value: "a")))
        #expect(!HTTPHeaders.isValidField(HTTPField(name: "X", value: " a")))
    }
}
