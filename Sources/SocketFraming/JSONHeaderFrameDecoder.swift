import Foundation

/// Decodes JSON header frames (`JSONHeaderFrame`; source article 000, MISSION.md M3.3): a JSON object
/// ended by CR LF, then as many body bytes as its `"size"` says, run through `transform`.
///
/// Bytes as TCP delivers them, and the frames that come out:
///
///     reads:   | {"size | ":2,"to":"bob"}\r\n h | i {"size":"0"}\r\n |
///     frames:                                     (["to": "bob"], "hi")  ([:], "")
///
/// A frame is returned once its header and all its body bytes have arrived; until then nothing is
/// consumed. The header is searched for CR LF only once: bytes already searched are not searched again,
/// and it is parsed once. A frame occupies at most `maximumFrameLength` = `maxHeaderLength` + 2 (CR LF) +
/// `maxBodyLength` bytes on the wire (the defaults: 4_096 + 2 + 1_048_576 = 1_052_674), and no more are
/// ever buffered for one. Give a reader (a socket's read limit) `maximumFrameLength`, not `maxBodyLength`.
/// A frame with a short header can be refused below `maximumFrameLength`, because its body alone is over
/// `maxBodyLength`; no frame over `maximumFrameLength` is ever accepted.
///
/// Errors (after one, close the connection; the decoder is not meant to be used again):
/// - `.headerTooLong(length:maxHeaderLength:)` as soon as more than `maxHeaderLength` bytes have arrived
///   with no CR LF among them;
/// - `.malformedHeader(reason)` when the header is not valid UTF-8 JSON (RFC 8259; arrays and objects
///   nested at most 512 deep), not an object, has no `"size"`, or a `"size"` that is not a non-negative integer (a number, or a string of ASCII digits);
/// - `.frameTooLong(length:maxFrameLength:)` with the size and `maxBodyLength` (body bytes, header and
///   CR LF not counted) when `"size"` is over `maxBodyLength`, as soon as the header's CR LF has arrived,
///   before any of the body is stored;
/// - what `transform.decode` throws;
/// - `.truncatedFrame(bufferedBytes:)` from `decodeLast` when the stream ends inside a frame.
public struct JSONHeaderFrameDecoder: FrameDecoder, Sendable {
    /// The most bytes the JSON header may have, CR LF excluded; default 4096.
    public let maxHeaderLength: Int
    /// The most bytes a body may have on the wire (before `transform` is undone), header and CR LF not
    /// counted; default 1 MiB (1 << 20 = 1_048_576).
    public let maxBodyLength: Int

    /// The most bytes one frame may occupy on the wire (see `FrameDecoder.maximumFrameLength`):
    /// `maxHeaderLength` + 2 (the CR LF ending the header) + `maxBodyLength`; 1_052_674 by default.
    public var maximumFrameLength: Int {
        maxHeaderLength.addingSaturating(DelimiterBasedFrameDecoder.crlf.count).addingSaturating(maxBodyLength)
    }
    /// Undoes the sender's transform on every body; default `IdentityTransform()`.
    public let transform: any BodyTransform

    private enum State {
        /// The header's CR LF has not arrived; no CR LF starts before `searchedBytes`.
        case waitingForHeader(searchedBytes: Int)
        /// The header, `headerLength` bytes with its CR LF, is parsed; the body's bytes are not all here.
        case waitingForBody(headerLength: Int, fields: [String: JSONValue], bodyLength: Int)
    }

    private var state = State.waitingForHeader(searchedBytes: 0)

    /// Creates a decoder.
    ///
    /// - Precondition: `maxHeaderLength >= 0`, `maxBodyLength >= 0` (programmer errors).
    public init(
        maxHeaderLength: Int = 4096, maxBodyLength: Int = 1 << 20,
        transform: any BodyTransform = IdentityTransform()
    ) {
        precondition(maxHeaderLength >= 0, "maxHeaderLength must not be negative: \(maxHeaderLength)")
        precondition(maxBodyLength >= 0, "maxBodyLength must not be negative: \(maxBodyLength)")
        self.maxHeaderLength = maxHeaderLength
        self.maxBodyLength = maxBodyLength
        self.transform = transform
    }

    /// Decodes the next frame, or returns nil, consuming nothing, until its header and all its body bytes
    /// have arrived. Throws as the type's documentation says.
    public mutating func decode(_ buffer: inout FrameBuffer) throws(FramingError) -> JSONHeaderFrame? {
        if case let .waitingForHeader(searchedBytes) = state {
            guard
                let end = buffer.firstIndex(
                    of: DelimiterBasedFrameDecoder.crlf, from: searchedBytes,
                    startLimit: min(maxHeaderLength, Int.max - 1) + 1)
            else {
                // A CR LF may still start at the last byte.
                let searched = max(searchedBytes, buffer.readableBytes - 1)
                guard searched <= maxHeaderLength else {
                    throw .headerTooLong(length: searched, maxHeaderLength: maxHeaderLength)
                }
                state = .waitingForHeader(searchedBytes: searched)
                return nil
            }
            let header = buffer.getData(at: 0, count: end) ?? Data()
            let (fields, bodyLength) = try Self.parse(header, maxBodyLength: maxBodyLength)
            state = .waitingForBody(headerLength: end + 2, fields: fields, bodyLength: bodyLength)
        }
        guard case let .waitingForBody(headerLength, fields, bodyLength) = state,
            buffer.readableBytes - headerLength >= bodyLength
        else { return nil }
        buffer.moveReaderIndex(forwardBy: headerLength)
        let wireBody = buffer.readData(count: bodyLength) ?? Data()
        state = .waitingForHeader(searchedBytes: 0)
        return JSONHeaderFrame(fields: fields, body: try transform.decode(wireBody))
    }

    /// The header's fields other than `"size"`, and the size. Throws as the type's documentation says.
    static func parse(_ header: Data, maxBodyLength: Int) throws(FramingError) -> ([String: JSONValue], Int) {
        guard let value = JSONValue.parse(header) else { throw .malformedHeader("header is not valid JSON") }
        guard case var .object(fields) = value else { throw .malformedHeader("header is not a JSON object") }
        guard let size = fields.removeValue(forKey: "size") else { throw .malformedHeader("header has no \"size\"") }
        let bodyLength: Int
        switch size {
        case let .number(number) where number >= 0 && number.rounded(.towardZero) == number:
            guard number <= Double(maxBodyLength) else {
                throw .frameTooLong(length: Int(exactly: number) ?? .max, maxFrameLength: maxBodyLength)
            }
            bodyLength = Int(number)
        case let .string(digits) where !digits.isEmpty && digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }):
            // Too many digits for an Int is too long a body as well.
            let length = Int(digits) ?? .max
            guard length <= maxBodyLength else { throw .frameTooLong(length: length, maxFrameLength: maxBodyLength) }
            bodyLength = length
        default:
            throw .malformedHeader("\"size\" is not a non-negative integer")
        }
        return (fields, bodyLength)
    }
}
