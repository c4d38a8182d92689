import Foundation

/// One message of the JSON header protocol (source article 000; MISSION.md M3.3): a JSON object ended by
/// CR LF, whose `"size"` gives the length of the body that follows.
///
/// On the wire:
///
///     +-------------------------------+-------+------------------+
///     | {"size":5,"type":"chat"}      | 0D 0A | 68 65 6C 6C 6F   |
///     | JSON object (RFC 8259), UTF-8 | CR LF | body: size bytes |
///     +-------------------------------+-------+------------------+
///
/// `"size"` is a non-negative integer, written as a JSON number (`5`) or as a string of decimal digits
/// (`"5"`, as the article's `NSString` does), and counts the body as it travels (after any
/// `BodyTransform`). The header may hold other keys; they are handed to the application as `fields`. The
/// first CR LF ends the header: JSON escapes CR and LF inside strings, so only whitespace between tokens
/// could hold one, and a header must not put CR LF there (LF alone, as a pretty-printer writes, is fine).
public struct JSONHeaderFrame: Equatable, Sendable {
    /// The header's keys other than `"size"`.
    public var fields: [String: JSONValue]
    /// The plain body (after the decoder's transform has undone the sender's).
    public var body: Data

    /// Creates a frame; `fields` defaults to none.
    public init(fields: [String: JSONValue] = [:], body: Data) {
        self.fields = fields
        self.body = body
    }
}
