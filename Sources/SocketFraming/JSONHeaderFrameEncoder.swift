import Foundation

/// Encodes JSON header frames (`JSONHeaderFrame`; source article 000, MISSION.md M3.3): the body through
/// `transform`, then `{"size":N,...}` with the transformed body's length and the other fields (keys
/// sorted, no whitespace), CR LF, and the body.
///
/// Messages and the bytes that go out (`sizeStyle` `.number`, then `.string` as the article writes it):
///
///     messages:  (["to": "bob"], "hi")                 ([:], "")
///     .number:   | {"size":2,"to":"bob"}\r\n h i |      {"size":0}\r\n |
///     .string:   | {"size":"2","to":"bob"}\r\n h i |    {"size":"0"}\r\n |
///
/// A `"size"` among `fields` is replaced by the body's length.
///
/// Errors: what `transform.encode` throws; `.malformedHeader` when a field holds a number JSON cannot
/// write (NaN or infinity). Nothing is appended then.
public struct JSONHeaderFrameEncoder: FrameEncoder, Sendable {
    /// How `"size"` is written.
    public enum SizeStyle: Sendable {
        /// A JSON number: `{"size":12}`.
        case number
        /// A JSON string of decimal digits, as source article 000 writes it: `{"size":"12"}`.
        case string
    }

    /// How `"size"` is written; default `.number`.
    public let sizeStyle: SizeStyle
    /// Applied to every body before it is written; default `IdentityTransform()`.
    public let transform: any BodyTransform

    /// Creates an encoder.
    public init(sizeStyle: SizeStyle = .number, transform: any BodyTransform = IdentityTransform()) {
        self.sizeStyle = sizeStyle
        self.transform = transform
    }

    /// Appends the header, CR LF and the transformed body to `out`. Throws as the type's documentation
    /// says; `out` is unchanged then.
    public func encode(_ message: JSONHeaderFrame, into out: inout Data) throws(FramingError) {
        let body = try transform.encode(message.body)
        var fields = message.fields
        fields.removeValue(forKey: "size")
        let size = sizeStyle == .number ? "\(body.count)" : "\"\(body.count)\""
        var header = Data("{\"size\":\(size)".utf8)
        if !fields.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let object: Data
            do {
                object = try encoder.encode(fields)
            } catch {
                throw .malformedHeader("a field holds a value JSON cannot represent (NaN or infinity)")
            }
            // `{"a":1}` becomes `,"a":1}` after the size.
            header.append(UInt8(ascii: ","))
            header.append(object.dropFirst())
        } else {
            header.append(UInt8(ascii: "}"))
        }
        out.append(header)
        out.append(contentsOf: DelimiterBasedFrameDecoder.crlf)
        out.append(body)
    }
}
