import Foundation
import SocketFraming
import Testing

/// `HTTPRequestHeadParser`: RFC 9112's request head, fed in every cutting, with its limits and refusals.
@Suite struct HTTPRequestHeadParserTests {
    /// The opening handshake of RFC 6455 §1.2, byte for byte.
    static let rfc6455Request =
        "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://example.com\r\n"
        + "Sec-WebSocket-Protocol: chat, superchat\r\nSec-WebSocket-Version: 13\r\n\r\n"

    static let rfc6455Head = HTTPRequestHead(
        method: "GET", target: "/chat", version: .http1_1,
        headers: [
            ("Host", "server.example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Origin", "http://example.com"),
            ("Sec-WebSocket-Protocol", "chat, superchat"), ("Sec-WebSocket-Version", "13")
        ])

    /// Feeds `bytes` at once; the head and the bytes consumed, or the error.
    static func parse(_ text: String, maxHeadBytes: Int = 8192) -> Result<HTTPHeadParseResult<HTTPRequestHead>, HTTPParseError> {
        var parser = HTTPRequestHeadParser(maxHeadBytes: maxHeadBytes)
        return Result { () throws(HTTPParseError) in try parser.feed(utf8(text)) }
    }

    @Test func the_rfc6455_example_request_parses_field_by_field() throws {
        var parser = HTTPRequestHeadParser()
        let bytes = utf8(Self.rfc6455Request)
        #expect(try parser.feed(bytes) == .complete(Self.rfc6455Head, consumedBytes: bytes.count))
        #expect(Self.rfc6455Head.bytes == bytes)
    }

    @Test func every_two_piece_cutting_gives_the_same_head_and_keeps_what_follows() throws {
        let leftover: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        let bytes = utf8(Self.rfc6455Request) + leftover
        let headLength = bytes.count - leftover.count
        for cut in 0...bytes.count {
            var parser = HTTPRequestHeadParser()
            let first = try parser.feed(bytes[..<cut])
            if cut < headLength {
                #expect(first == .needMore, "cut \(cut)")
                #expect(try parser.feed(bytes[cut...]) == .complete(Self.rfc6455Head, consumedBytes: headLength - cut), "cut \(cut)")
            } else {
                #expect(first == .complete(Self.rfc6455Head, consumedBytes: headLength), "cut \(cut)")
            }
        }
    }

    @Test func random_many_piece_cuttings_give_the_same_head_and_end() throws {
        let bytes = utf8(Self.rfc6455Request) + utf8("tail")
        let headLength = bytes.count - 4
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<300 {
            var parser = HTTPRequestHeadParser()
            var start = 0
            var result = HTTPHeadParseResult<HTTPRequestHead>.needMore
            while case .needMore = result, start < bytes.count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let size = min(bytes.count - start, 1 + Int(state >> 33) % 40)
                result = try parser.feed(bytes[start..<start + size])
                if case let .complete(_, consumed) = result { start += consumed } else { start += size }
            }
            #expect(result == .complete(Self.rfc6455Head, consumedBytes: try #require(Self.lastConsumed(result))))
            #expect(start == headLength)
        }
    }

    static func lastConsumed(_ result: HTTPHeadParseResult<HTTPRequestHead>) -> Int? {
        guard case let .complete(_, consumed) = result else { return nil }
        return consumed
    }

    @Test func one_byte_at_a_time_ends_at_the_last_lf() throws {
        var parser = HTTPRequestHeadParser()
        let bytes = utf8(Self.rfc6455Request)
        for byte in bytes.dropLast() { #expect(try parser.feed([byte]) == .needMore) }
        #expect(try parser.feed([bytes[bytes.count - 1], 0x81]) == .complete(Self.rfc6455Head, consumedBytes: 1))
        // One head per parser: afterwards it answers the same head, taking nothing.
        #expect(try parser.feed([0x81]) == .complete(Self.rfc6455Head, consumedBytes: 0))
    }

    @Test func parsing_from_a_frame_buffer_leaves_what_follows_the_head_readable() throws {
        var parser = HTTPRequestHeadParser()
        var buffer = FrameBuffer()
        buffer.append(contentsOf: utf8("GET / HTTP/1.1\r\nHost: a\r"))
        #expect(try parser.parse(&buffer) == nil)
        #expect(buffer.readableBytes == 0)
        buffer.append(contentsOf: utf8("\n\r\nNEXT"))
        #expect(try parser.parse(&buffer) == HTTPRequestHead(method: "GET", target: "/", headers: [("Host", "a")]))
        #expect(buffer.readData(count: 4) == Data(utf8("NEXT")))
    }

    @Test func empty_lines_before_the_request_line_are_skipped() throws {
        let result = try Self.parse("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").get()
        #expect(result == .complete(HTTPRequestHead(method: "GET", target: "/", headers: [("Host", "a")]), consumedBytes: 31))
    }

    @Test func field_values_lose_surrounding_whitespace_and_keep_inner_whitespace() throws {
        let text = "GET / HTTP/1.1\r\nHost:a\r\nX-A: \t one  two \t\r\nX-B:\r\n\r\n"
        let head = HTTPRequestHead(method: "GET", target: "/", headers: [("Host", "a"), ("X-A", "one  two"), ("X-B", "")])
        #expect(try Self.parse(text).get() == .complete(head, consumedBytes: 51))
    }

    @Test func http_1_0_needs_no_host() throws {
        let result = try Self.parse("GET / HTTP/1.0\r\n\r\n").get()
        #expect(result == .complete(HTTPRequestHead(method: "GET", target: "/", version: .http1_0), consumedBytes: 18))
    }

    @Test func a_head_of_exactly_the_limit_is_accepted_and_one_byte_more_is_431() throws {
        let start = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: "
        let padding = String(repeating: "p", count: 8192 - start.utf8.count - 4)
        let exact = start + padding + "\r\n\r\n"
        #expect(exact.utf8.count == 8192)
        #expect(try Self.parse(exact).get() == .complete(try #require(Self.headOf(exact)), consumedBytes: 8192))
        let over = start + padding + "p\r\n\r\n"
        #expect(Self.parse(over) == .failure(.headTooLarge(limitBytes: 8192)))
        #expect(HTTPParseError.headTooLarge(limitBytes: 8192).statusCode == 431)
    }

    @Test func an_endless_head_fails_on_the_first_byte_over_the_limit_however_slowly_it_comes() throws {
        var parser = HTTPRequestHeadParser(maxHeadBytes: 64)
        let bytes = utf8("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 100))
        for byte in bytes[..<64] { #expect(try parser.feed([byte]) == .needMore) }
        #expect(throws: HTTPParseError.headTooLarge(limitBytes: 64)) { try parser.feed([bytes[64]]) }
        // And again: a failed parser stays failed.
        #expect(throws: HTTPParseError.headTooLarge(limitBytes: 64)) { try parser.feed([0x0D]) }
    }

    @Test func more_fields_than_the_limit_is_431() {
        var parser = HTTPRequestHeadParser(maxHeaderFields: 2)
        #expect(throws: HTTPParseError.tooManyHeaderFields(limit: 2)) {
            try parser.feed(utf8("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n"))
        }
        var enough = HTTPRequestHeadParser(maxHeaderFields: 2)
        #expect(throws: Never.self) { try enough.feed(utf8("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\n\r\n")) }
    }

    static let refusals: [(String, HTTPParseError, Int)] = [
        ("GET / HTTP/1.1\nHost: a\r\n\r\n", .bareLineFeed, 400),
        ("GET / HTTP/1.1\r\nHost: a\n\n", .bareLineFeed, 400),
        ("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", .bareCarriageReturn, 400),
        ("GET / HTTP/1.1\r\nHost: a\0\r\n\r\n", .invalidByte(0, offset: 23), 400),
        ("GET / HTTP/1.1\r\nHost: a\u{7F}\r\n\r\n", .invalidByte(0x7F, offset: 23), 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", .obsoleteLineFolding, 400),
        ("GET / HTTP/1.1\r\n\tHost: a\r\n\r\n", .obsoleteLineFolding, 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-(bad): 1\r\n\r\n", .invalidFieldName("X-(bad)"), 400),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .invalidFieldName("Host "), 400),
        ("GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", .invalidFieldName(""), 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", .missingColon, 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", .duplicateHost, 400),
        ("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", .missingHost, 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion(HTTPVersion(major: 2, minor: 0)), 505),
        ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", .unsupportedVersion(HTTPVersion(major: 0, minor: 9)), 505),
        ("GET / HTTP/1.10\r\nHost: a\r\n\r\n", .invalidVersion, 400),
        ("GET / http/1.1\r\nHost: a\r\n\r\n", .invalidVersion, 400),
        ("GET /\r\nHost: a\r\n\r\n", .invalidRequestLine, 400),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine, 400),
        ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", .invalidRequestLine, 400),
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine, 400),
        ("GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine, 400)
    ]

    @Test(arguments: HTTPRequestHeadParserTests.refusals) func a_malformed_head_is_refused_with_its_status(
        text: String, error: HTTPParseError, status: Int
    ) {
        #expect(Self.parse(text) == .failure(error))
        #expect(error.statusCode == status)
        // The same refusal whichever way the bytes come.
        var parser = HTTPRequestHeadParser()
        #expect(throws: error) { for byte in utf8(text) { _ = try parser.feed([byte]) } }
    }

    @Test func the_answer_to_a_too_large_head_is_a_plain_text_431_that_closes() {
        let expected =
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: 29\r\nConnection: close\r\n\r\nHTTP head exceeds 8192 bytes\n"
        #expect(HTTPParseError.headTooLarge(limitBytes: 8192).response.bytes == utf8(expected))
        #expect(HTTPParseError.unsupportedVersion(HTTPVersion(major: 2, minor: 0)).response.head.statusCode == 505)
    }

    static func headOf(_ text: String) -> HTTPRequestHead? {
        guard case let .success(.complete(head, _)) = parse(text) else { return nil }
        return head
    }
}
