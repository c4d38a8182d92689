// Fuzz target: the HTTP/1.1 head parsers (HTTPRequestHeadParser, HTTPResponseHeadParser) and the WebSocket
// upgrade checks on what they parse (WebSocketServerHandshake, WebSocketClientHandshake). Traps when
// - the head, the error, or where the head ends depends on how the stream is cut (all at once, one byte at a
//   time, random chunks, through a FrameBuffer);
// - a head ends after more than the limit's bytes, or the parser waits for more after more than the limit;
// - a parsed head, written back, does not parse to itself;
// - an upgrade the server accepts, answered with its own 101, is refused by a client that offered what the
//   request offered; a refusal's or a parse error's answer does not parse with its status;
// - permessage-deflate's server negotiation on the offered extensions answers with an element that is not
//   a valid header element parsing back to itself.
import Foundation
import SocketFraming

/// The parser's answer to a whole stream: the head and the offset where it ended, or the error, or nil
/// when it needs more.
enum Outcome<Head: Equatable>: Equatable {
    case head(Head, end: Int)
    case failed(HTTPParseError)
    case needMore
}

/// Feeds `stream` in chunks whose sizes `chunkSeed` picks (0: one byte at a time).
func outcome<Head>(
    _ stream: [UInt8], chunkSeed: UInt32, feed: ([UInt8]) throws(HTTPParseError) -> HTTPHeadParseResult<Head>
) -> Outcome<Head> {
    var state = chunkSeed &* 2_654_435_761 | 1
    var start = 0
    while start < stream.count {
        state = state &* 1_103_515_245 &+ 12345
        let size = chunkSeed == 0 ? 1 : min(stream.count - start, 1 + Int(state >> 16) % Int(chunkSeed % 97 + 1))
        do {
            if case let .complete(head, consumed) = try feed(Array(stream[start..<start + size])) {
                guard consumed >= 1, consumed <= size else { fatalError("consumed \(consumed) of a chunk of \(size)") }
                return .head(head, end: start + consumed)
            }
        } catch {
            return .failed(error)
        }
        start += size
    }
    return .needMore
}

func allCuttingsAgree<Head: Equatable>(
    _ stream: [UInt8], chunkSeed: UInt8, limit: Int, make: () -> ([UInt8]) throws(HTTPParseError) -> HTTPHeadParseResult<Head>
) -> Outcome<Head> {
    let whole = outcome(stream, chunkSeed: UInt32.max, feed: make())
    let bytewise = outcome(stream, chunkSeed: 0, feed: make())
    let chunked = outcome(stream, chunkSeed: UInt32(chunkSeed) + 1, feed: make())
    guard whole == bytewise, whole == chunked else { fatalError("cuttings disagree: \(whole) \(bytewise) \(chunked)") }
    switch whole {
    case let .head(_, end) where end > limit: fatalError("head of \(end) bytes over the limit \(limit)")
    case .needMore where stream.count > limit: fatalError("waiting after \(stream.count) bytes, limit \(limit)")
    default: return whole
    }
}

func checkRequest(_ stream: [UInt8], chunkSeed: UInt8, limit: Int) {
    let result = allCuttingsAgree(stream, chunkSeed: chunkSeed, limit: limit) {
        var parser = HTTPRequestHeadParser(maxHeadBytes: limit)
        return { (bytes: [UInt8]) throws(HTTPParseError) in try parser.feed(bytes) }
    }
    var buffer = FrameBuffer()
    buffer.append(contentsOf: stream)
    var bufferParser = HTTPRequestHeadParser(maxHeadBytes: limit)
    let fromBuffer = try? bufferParser.parse(&buffer)
    switch result {
    case let .head(head, end):
        guard fromBuffer == head, buffer.readableBytes == stream.count - end else { fatalError("FrameBuffer parse differs") }
        var again = HTTPRequestHeadParser(maxHeadBytes: 1 << 20)
        guard case .complete(head, _)? = try? again.feed(head.bytes) else { fatalError("written head does not parse back") }
        checkUpgrade(head)
    case let .failed(error): checkAnswer(error.response, status: error.statusCode)
    case .needMore: break
    }
}

func checkUpgrade(_ head: HTTPRequestHead) {
    switch WebSocketServerHandshake.validate(head) {
    case let .upgrade(request):
        let client = WebSocketClientHandshake(
            url: WebSocketURL.local, subprotocols: request.subprotocols, extensions: request.extensions, key: request.key)
        let answer = request.accept(subprotocol: request.subprotocols.first, extensions: request.extensions)
        var parser = HTTPResponseHeadParser(maxHeadBytes: 1 << 20)
        guard case let .complete(parsed, _)? = try? parser.feed(answer.bytes), parsed == answer else { fatalError("101 does not parse") }
        do {
            let accepted = try client.validate(parsed)
            guard accepted.subprotocol == request.subprotocols.first, accepted.extensions == request.extensions else {
                fatalError("client accepted other than the server chose")
            }
        } catch {
            fatalError("client refuses the server's own 101: \(error)")
        }
        checkDeflateNegotiation(request.extensions)
    case let .refused(refusal): checkAnswer(refusal.response, status: refusal.statusCode)
    case .notUpgrade: break
    }
}

func checkDeflateNegotiation(_ offers: [WebSocketExtension]) {
    guard case let .accepted(_, response, index) = PerMessageDeflate.ServerConfiguration().negotiate(offers) else { return }
    guard index < offers.count, response.isValidHeaderElement, WebSocketExtension.parse([response.description]) == [response] else {
        fatalError("deflate response \(response) is not a valid header element")
    }
}

func checkAnswer(_ response: HTTPResponse, status: Int) {
    var parser = HTTPResponseHeadParser()
    guard case let .complete(head, consumed)? = try? parser.feed(response.bytes), head.statusCode == status,
        response.bytes.count - consumed == Int(head.headers.first("Content-Length") ?? "")
    else { fatalError("error answer does not parse") }
}

func checkResponse(_ stream: [UInt8], chunkSeed: UInt8, limit: Int) {
    let result = allCuttingsAgree(stream, chunkSeed: chunkSeed, limit: limit) {
        var parser = HTTPResponseHeadParser(maxHeadBytes: limit)
        return { (bytes: [UInt8]) throws(HTTPParseError) in try parser.feed(bytes) }
    }
    guard case let .head(head, _) = result else { return }
    let client = WebSocketClientHandshake(
        url: WebSocketURL.local, subprotocols: ["chat"], extensions: [WebSocketExtension(name: "permessage-deflate")],
        key: "dGhlIHNhbXBsZSBub25jZQ==")
    _ = try? client.validate(head)
}

extension WebSocketURL {
    static let local: WebSocketURL = {
        guard let url = try? WebSocketURL("ws://localhost/") else { fatalError("ws://localhost/ is a WebSocket URL") }
        return url
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPUpgrade(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let chunkSeed = input.byte()
    let limit = [64, 256, 1024, 8192][input.int(in: 0...3)]
    let stream = input.rest()
    if mode & 1 == 0 {
        checkRequest(stream, chunkSeed: chunkSeed, limit: limit)
    } else {
        checkResponse(stream, chunkSeed: chunkSeed, limit: limit)
    }
    // Any text as a URL: parsed or refused, never a trap.
    _ = try? WebSocketURL(String(decoding: stream.prefix(128), as: UTF8.self))
    return 0
}
