import ChatProtocol
import Foundation
import SocketFraming

/// What a bench connection makes of one frame from the server after its login, in either protocol
/// version. Only what a run checks is decoded; everything else (presence, presenceChanges, onlineUsers,
/// history, codes this build does not know) is ``ignored`` by its function code before any decoding,
/// so a newer server's messages never end a connection.
enum ServerEvent: Equatable, Sendable {
    /// A direct message (`isDirect`) or broadcast from `from`; `conversation` and `sequence` only for
    /// a stored version 2 session (nil when live).
    case delivery(from: String, text: String, isDirect: Bool, conversation: String?, sequence: UInt64?)
    /// Version 2: the client's message `id` was accepted (`sequence` nil: live only, not stored).
    case stored(id: UInt64, sequence: UInt64?)
    /// Version 2: a receipt (✓✓).
    case receipt
    /// The heartbeat's answer.
    case heartbeatAck
    /// An error frame. `code` is the body's `code` string, kept as text so that codes newer than this
    /// build's ``ChatErrorCode`` (such as `rateLimited`) are still counted by name; `id` is the numbered
    /// message it answers (version 2), if any.
    case error(code: String, detail: String, id: UInt64?)
    /// A frame a run does not look at, by function code.
    case ignored(functionCode: UInt16)

    /// Function codes decoded into an event; every other code is ``ignored(functionCode:)`` undecoded.
    static let decodedCodes: Set<UInt16> = [
        FunctionCode.loginAccepted.rawValue, FunctionCode.delivery.rawValue, FunctionCode.stored.rawValue,
        FunctionCode.receipt.rawValue, FunctionCode.heartbeatAck.rawValue, FunctionCode.error.rawValue
    ]

    /// The code, detail and id of an error frame's JSON body read without ``ChatCodec`` (whose
    /// ``ChatErrorCode`` refuses codes it does not know); nil when the body is not such an object.
    static func looseError(body: Data) -> ServerEvent? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let code = object["code"] as? String
        else { return nil }
        let id = (object["id"] as? NSNumber).flatMap { UInt64(exactly: $0.doubleValue) }
        return .error(code: code, detail: object["detail"] as? String ?? "", id: id)
    }

    /// The `retryAfter` of an error body (whole seconds), or nil when it has none.
    static func retryAfter(body: Data) -> UInt64? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return (object["retryAfter"] as? NSNumber).flatMap { UInt64(exactly: $0.doubleValue) }
    }

    /// The event of a decoded message after the login; nil for a login answer, an error (read with
    /// ``looseError(body:)`` instead, never through the codec) or a message only a client sends (which a
    /// run counts as unexpected).
    init?(_ message: ChatMessage) {
        switch message {
        case .delivery(let from, let text, let isDirect):
            self = .delivery(from: from, text: text, isDirect: isDirect, conversation: nil, sequence: nil)
        case .heartbeatAck, .v2(.heartbeatAck): self = .heartbeatAck
        case .presence, .v2(.presence), .v2(.history): self = .ignored(functionCode: message.functionCode.rawValue)
        case .v2(.delivery(let from, let text, let isDirect, let conversation, let sequence, _)):
            self = .delivery(
                from: from, text: text, isDirect: isDirect, conversation: sequence == nil ? nil : conversation, sequence: sequence)
        case .v2(.stored(let id, _, let sequence)): self = .stored(id: id, sequence: sequence)
        case .v2(.receipt): self = .receipt
        default: return nil
        }
    }
}
