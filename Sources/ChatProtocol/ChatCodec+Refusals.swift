import Foundation
import LongLink
import SocketFraming

/// What the server says when it refuses (docs/PROTOCOL.md "Limits and refusals"): the error frame each
/// ``LinkRefusal`` becomes, in the client's version; plain words for protocol errors; the text limit.
extension ChatCodec {
    /// The longest text a direct message or broadcast may carry, counted as its JSON string is written
    /// (``jsonTextBytes(_:)``): 65,000 bytes. A longer one is refused with
    /// ``ChatErrorCode/messageTooLong``.
    ///
    /// Derived so that every delivery of an accepted text fits in a body (64 KiB = 65,536 bytes, as
    /// every frame's must), in either version and in a history: the longest delivery around its text is
    /// a version 2 direct one, `{"conversation":"direct:N N","direct":true,"from":"N","seq":S,"text":"",
    /// "time":T}` with `seq` and `time` of 16 digits (``maxExactInteger``): 108 bytes, plus three names
    /// of at most ``UserName/maxBytes`` (64) bytes of UTF-8 each (a name holds no character JSON writes
    /// longer: no control characters, no `"` or `\`), 192 bytes: 300 in all, and 65,536 − 300 = 65,236
    /// ≥ 65,000. (A history of one message has 24 bytes less around it.)
    public static let maxTextBytes = 65_000

    /// The bytes `text` takes inside a JSON string (its quotes not counted) as ``ChatCodec`` writes it:
    /// its UTF-8 bytes, except `"` and `\` (2 bytes each: `\"`, `\\`), and the control characters
    /// U+0000 to U+001F: 2 bytes for backspace, tab, line feed, form feed and carriage return (`\b`
    /// `\t` `\n` `\f` `\r`), 6 for the others (`\u001B`). Every other character, `/` included, is its
    /// UTF-8 bytes. For a text without quotes, backslashes or control characters: its UTF-8 length.
    public static func jsonTextBytes(_ text: String) -> Int {
        var bytes = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: bytes += 2
            case 0x00..<0x20: bytes += 6
            default: bytes += 1
            }
        }
        return bytes
    }

    /// The protocol version of `message`: 1 or 2 (``ChatMessage/version``).
    public func version(of message: ChatMessage) -> UInt16 { message.version.rawValue }

    /// The error frame each refusal becomes, in `version` (version 1 when it is unknown):
    /// ``ChatErrorCode/serverFull``, ``ChatErrorCode/protocolError`` (the reason in plain words),
    /// ``ChatErrorCode/loginTimeout``, ``ChatErrorCode/frameTimeout`` and
    /// ``ChatErrorCode/serverShuttingDown``, each with a detail a person can read.
    public func farewell(_ refusal: LinkRefusal, version: UInt16?) -> ChatMessage? {
        let (code, detail): (ChatErrorCode, String)
        switch refusal {
        case .serverFull(let limit):
            (code, detail) = (.serverFull, "the server is full (\(limit) connections); try again later")
        case .protocolError(let reason):
            (code, detail) = (.protocolError, reason)
        case .admissionTimeout(let timeout):
            (code, detail) = (.loginTimeout, "no login within \(ChatCodec.seconds(timeout)) s of connecting")
        case .frameTimeout(let timeout):
            (code, detail) = (.frameTimeout, "a frame was not finished within \(ChatCodec.seconds(timeout)) s of its first byte")
        case .shuttingDown:
            (code, detail) = (.serverShuttingDown, "the server is shutting down; reconnect")
        }
        return version == ChatProtocolVersion.v2.rawValue
            ? .v2(.error(code: code, detail: detail, id: nil, retryAfter: nil)) : .error(code: code, detail: detail)
    }

    /// True for ``ChatErrorCode/serverShuttingDown`` errors of either version.
    public func isGoingAway(_ message: ChatMessage) -> Bool {
        switch message {
        case .error(.serverShuttingDown, _), .v2(.error(.serverShuttingDown, _, _, _)): return true
        default: return false
        }
    }

    /// Plain words for a bad frame (a ``FramingError`` of the decoder) or message (a ``ProtocolError``),
    /// for the `protocolError` frame and the log: `not a chat frame: version 0x4745 ("GE") is not 1 or 2`
    /// for an HTTP request, `function code 0x0014 is not a version 1 message`, ….
    public func describe(_ error: any Error) -> String {
        if let error = error as? FramingError { return ChatCodec.plainWords(error, maxBodyLength: maxBodyLength) }
        return "\(error)"
    }

    static func plainWords(_ error: FramingError, maxBodyLength: Int) -> String {
        switch error {
        case .unsupportedVersion(let version):
            return "not a chat frame: version \(hex(version)) (\(ascii(version))) is not 1 or 2"
        case .unknownFunctionCode(let code):
            guard let known = FunctionCode(rawValue: code) else { return "function code \(hex(code)) is not a chat message" }
            return "function code \(hex(code)) (\(known)) is not a version 1 message"
        case .malformedHeader(let reason):
            return "not a chat frame: \(reason)"
        case .frameTooLong(let length, let limit):
            return "a body of \(length) bytes is over the limit of \(limit) bytes"
        case .decompressedTooLarge:
            return "the compressed body decompresses to more than \(maxBodyLength) bytes"
        case .decompressionFailed(let reason):
            return "the compressed body is not a valid zlib stream (\(reason))"
        default:
            return "\(error)"
        }
    }

    /// `0x4745`.
    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// The two bytes as text when both are printable ASCII (`"GE"`), else `not text`.
    private static func ascii(_ value: UInt16) -> String {
        let bytes = [UInt8(value >> 8), UInt8(value & 0xFF)]
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "not text" }
        return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
    }

    /// Whole seconds when whole ("10"), else to the millisecond ("0.25").
    package static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }
}
