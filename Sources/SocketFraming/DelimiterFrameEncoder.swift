import Foundation

/// Writes each message followed by a delimiter: the encoding half of `DelimiterBasedFrameDecoder`
/// (MISSION.md M3.2).
///
/// Messages and the bytes that go out, with the delimiter CRLF:
///
///     messages:  "hi"           ""       "ok"
///     bytes:     | 68 69 0D 0A | 0D 0A | 6F 6B 0D 0A |
///
/// Errors: `.messageContainsDelimiter(offset:)` when the message holds the delimiter (the peer would cut it
/// there), or ends with bytes that the delimiter would complete into an earlier occurrence (with the
/// delimiter `"--"`, the message `"a-"` would travel as `"a---"` and arrive as `"a"`). Nothing is appended
/// then. A decoder given more delimiters than this
/// encoder writes may still cut messages holding those: keep them out of the messages too.
public struct DelimiterFrameEncoder: FrameEncoder, Sendable {
    /// The bytes written after every message.
    public let delimiter: [UInt8]

    /// Creates an encoder that ends every message with `delimiter`.
    ///
    /// - Precondition: `delimiter` is not empty (a programmer error otherwise).
    public init(delimiter: [UInt8]) {
        precondition(!delimiter.isEmpty, "a delimiter must not be empty")
        self.delimiter = delimiter
    }

    /// Appends `message`, then the delimiter, to `out`. Throws as the type's documentation says; `out` is
    /// unchanged then.
    public func encode(_ message: Data, into out: inout Data) throws(FramingError) {
        // Search the message and the delimiter's own start: the first occurrence must be the appended one.
        var buffer = FrameBuffer()
        buffer.append(message)
        buffer.append(contentsOf: delimiter)
        if let index = buffer.firstIndex(of: delimiter, from: 0), index < message.count {
            throw .messageContainsDelimiter(offset: index)
        }
        out.append(message)
        out.append(contentsOf: delimiter)
    }
}
