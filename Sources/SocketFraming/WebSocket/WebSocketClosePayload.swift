import Foundation

/// The payload of a close frame (RFC 6455 §5.5.1): empty, or a 2-byte status code in network byte order
/// followed by a UTF-8 reason.
///
///     payload:  03 E8 62 79 65
///     close:    code 1000 (normalClosure), reason "bye"
///
/// Parsing (`init(payload:)`) refuses a 1-byte payload (1002), a code not valid on the wire (1002, see
/// `WebSocketCloseCode.isValidOnWire`) and a reason that is not UTF-8 (1007). Building (`payload()`)
/// refuses a code not valid on the wire and a reason over 123 bytes.
public struct WebSocketClosePayload: Hashable, Sendable, CustomStringConvertible {
    /// The status code, or nil for an empty payload: the receiver then reports 1005 (`noStatusReceived`,
    /// RFC 6455 §7.1.5), and never sends that code itself.
    public let code: WebSocketCloseCode?
    /// Why the connection is closing, for people and logs, not for programs (RFC 6455 §7.1.6); empty
    /// when the payload is empty.
    public let reason: String

    /// A close with `code` and `reason` (at most 123 UTF-8 bytes: checked by `payload()`).
    public init(code: WebSocketCloseCode, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    private init(emptyPayload: Void) {
        code = nil
        reason = ""
    }

    /// The close with an empty payload: no code, no reason.
    public static let empty = WebSocketClosePayload(emptyPayload: ())

    /// Parses a received close frame's payload (already unmasked).
    ///
    /// - Throws: `.closePayloadTooShort` for 1 byte, `.invalidCloseCode` for a code not valid on the wire,
    ///   `.invalidCloseReason` for a reason that is not UTF-8.
    public init(payload: Data) throws(WebSocketProtocolError) {
        guard !payload.isEmpty else {
            self = .empty
            return
        }
        guard payload.count >= 2 else { throw .closePayloadTooShort }
        let start = payload.startIndex
        let rawCode = UInt16(payload[start]) << 8 | UInt16(payload[start + 1])
        let code = WebSocketCloseCode(rawValue: rawCode)
        guard code.isValidOnWire else { throw .invalidCloseCode(rawCode) }
        let reasonBytes = payload.dropFirst(2)
        var validator = UTF8Validator()
        if let offset = validator.validate(reasonBytes) { throw .invalidCloseReason(offset: offset) }
        guard validator.isAtCharacterBoundary else { throw .invalidCloseReason(offset: reasonBytes.count) }
        self.init(code: code, reason: String(decoding: reasonBytes, as: UTF8.self))
    }

    /// The bytes of a close frame's payload: empty for `.empty`, else the code (2 bytes, network byte
    /// order) and the reason's UTF-8.
    ///
    /// - Throws: `.invalidCloseCode` for a code not valid on the wire (1005, 1006, 1015, ...),
    ///   `.closeReasonTooLong` for a reason over 123 UTF-8 bytes.
    public func payload() throws(WebSocketProtocolError) -> Data {
        guard let code else { return Data() }
        guard code.isValidOnWire else { throw .invalidCloseCode(code.rawValue) }
        let reasonBytes = Array(reason.utf8)
        guard reasonBytes.count <= 123 else { throw .closeReasonTooLong(length: reasonBytes.count) }
        var data = Data([UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)])
        data.append(contentsOf: reasonBytes)
        return data
    }

    /// The code and the reason, e.g. "1000 \"bye\"", or "no status" for an empty payload.
    public var description: String {
        guard let code else { return "no status" }
        return reason.isEmpty ? "\(code)" : "\(code) \"\(reason)\""
    }
}
