import AsyncSocket
import Foundation
import SocketFraming

/// SocketFraming's two HTTP/1.1 head parsers, as one kind for ``TCPSocket/readHTTPHead(with:maxBytes:timeout:completion:)``.
package protocol HTTPHeadParsing: Sendable {
    associatedtype Head: Sendable
    /// Takes the readable bytes of `buffer` up to the end of the head: the head, or nil for more.
    mutating func parse(_ buffer: inout FrameBuffer) throws(HTTPParseError) -> Head?
}

extension HTTPRequestHeadParser: HTTPHeadParsing {}
extension HTTPResponseHeadParser: HTTPHeadParsing {}

/// What a head read found, handed from its consumer to its completion (both on the socket's loop).
private final class HeadSlot<Parser: HTTPHeadParsing>: @unchecked Sendable {
    var parser: Parser
    var head: Parser.Head?
    var error: HTTPParseError?

    init(_ parser: Parser) { self.parser = parser }
}

extension TCPSocket {
    /// Reads one HTTP/1.1 head with `parser` by a consuming read (the bytes after it stay buffered for the
    /// next read: a WebSocket's first frames), at most `maxBytes` (the parser's own bound) within
    /// `timeout` seconds. `completion` runs on the loop with the head, or the parser's error (a head over
    /// the bound is `headTooLarge`); nil for both when the read failed (the socket ended, timed out).
    package func readHTTPHead<Parser: HTTPHeadParsing>(
        with parser: Parser, maxBytes: Int, timeout: TimeInterval,
        completion: @escaping @Sendable (Result<Parser.Head, HTTPParseError>?) -> Void
    ) {
        let slot = HeadSlot(parser)
        read(
            .consuming(
                { bytes in
                    do throws(HTTPParseError) {
                        let (head, consumed) = try FrameBuffer.borrowing(bytes) { buffer throws(HTTPParseError) in
                            try slot.parser.parse(&buffer)
                        }
                        guard let head else { return .needMoreData(consumed: consumed) }
                        slot.head = head
                        return .complete(consumed: consumed)
                    } catch {
                        slot.error = error
                        return .complete(consumed: 0)
                    }
                }, maxLength: maxBytes + 1),
            timeout: timeout, tag: 0
        ) { result in
            guard case .success = result else { return completion(nil) }
            if let head = slot.head { return completion(.success(head)) }
            completion(.failure(slot.error ?? .headTooLarge(limitBytes: maxBytes)))
        }
    }
}
