import Foundation

/// The chat protocol's versions, as the frame header's version field (2 bytes, big-endian) carries them.
public enum ChatProtocolVersion: UInt16, Sendable, CaseIterable, Comparable {
    /// Version 1: live messages only, no ids (docs/PROTOCOL.md "Messages").
    case v1 = 1
    /// Version 2: numbered messages, acknowledgements, sequence numbers, history, passwords
    /// (docs/PROTOCOL.md "Version 2").
    case v2 = 2

    /// Orders by version number.
    public static func < (lhs: ChatProtocolVersion, rhs: ChatProtocolVersion) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A message of version 2 of the chat protocol, carried as ``ChatMessage/v2(_:)`` in frames with version
/// field 2 (docs/PROTOCOL.md "Version 2" lists the bodies and the rules).
///
/// Conventions: a client message id (`id`) and a sequence number (`sequence`, `upTo`) are 1 to
/// ``ChatCodec/maxExactInteger`` (2^53 − 1, exact in JavaScript and Python doubles); a position is 0
/// ("nothing received yet") to that maximum. A conversation is named by its text form: `"room"` (the
/// everyone room, where broadcasts go) or `"direct:ann bob"` (the two users' names, sorted, one space).
/// Times travel as whole milliseconds since 1970-01-01 00:00 UTC. ``ChatCodec`` refuses values outside
/// these bounds, on encode and on decode, with a ``ChatCodec/ProtocolError``.
public enum ChatMessageV2: Sendable, Equatable {
    /// Client → server: log in as `name`. `password` (1 to 1,024 bytes of UTF-8) claims the name on
    /// its first use and is required afterwards; without one the session is live only, as in version 1.
    /// `resumeToken` as in version 1. `clientInstance`: 32 lowercase hexadecimal digits, made once per
    /// client installation; the server de-duplicates numbered messages by (name, client instance, id).
    /// `positions`: for each conversation, the highest sequence number this client has received (at
    /// most ``ChatCodec/maxPositions`` entries); the server sends what follows. `presenceChanges`: true
    /// asks for presence as one ``presenceChanges(online:offline:onlineCount:unlisted:)`` per presence
    /// tick instead of single ``presence(name:online:)`` messages (which are capped per tick); default
    /// false, also when the key is missing on the wire.
    case login(
        name: String, password: String?, resumeToken: String?, clientInstance: String, positions: [String: UInt64],
        presenceChanges: Bool = false)
    /// Server → client: logged in, as in version 1; `stored` is true when the session has a password
    /// (messages are stored, numbered and acknowledged), false when it is live only.
    case loginAccepted(name: String, online: [String], onlineCount: Int, resumeToken: String, stored: Bool)
    /// Client → server: send `text` to user `to`; `id` is the client's id for it.
    case directMessage(id: UInt64, to: String, text: String)
    /// Client → server: send `text` to the room (every user); `id` is the client's id for it.
    case broadcast(id: UInt64, text: String)
    /// Server → client: `text` from `from` in `conversation`, sent at `time` (millisecond precision);
    /// `isDirect` is false for the room. `sequence` is the message's number in the conversation, or
    /// `nil` for a live-only session (nothing to acknowledge).
    case delivery(from: String, text: String, isDirect: Bool, conversation: String, sequence: UInt64?, time: Date)
    /// Server → client: user `name` logged in (`online` true) or left (false), as in version 1.
    case presence(name: String, online: Bool)
    /// Client → server: the heartbeat, as in version 1.
    case heartbeat
    /// Server → client: the heartbeat's acknowledgement, as in version 1.
    case heartbeatAck
    /// Server → client: the client's message `id` is stored durably (or was already: a resend) as number
    /// `sequence` of `conversation`. `sequence` is `nil` for a live-only session: the message was passed
    /// to the users online and not stored.
    case stored(id: UInt64, conversation: String, sequence: UInt64?)
    /// Client → server: this client has received every message of `conversation` up to number `upTo`
    /// (cumulative; a lower number than before changes nothing).
    case received(conversation: String, upTo: UInt64)
    /// Server → client: user `by`'s client has received every message of the direct `conversation`
    /// up to number `upTo`.
    case receipt(conversation: String, upTo: UInt64, by: String)
    /// Client → server: send the last `limit` (1 to ``ChatCodec/maxHistoryLimit``) messages of
    /// `conversation`.
    case historyRequest(conversation: String, limit: Int)
    /// Server → client: the last messages of `conversation`, oldest first, at most
    /// ``ChatCodec/maxHistoryLimit``.
    case history(conversation: String, messages: [ChatHistoryEntry])
    /// Client → server: send a page of the users online: their names sorted by Unicode code points,
    /// those strictly after `after` (from the first when `nil`), at most `limit` (1 to
    /// ``ChatCodec/maxWhoLimit``) of them. Answered with ``onlineUsers(names:onlineCount:more:)``.
    case who(after: String?, limit: Int)
    /// Server → client: a page of the users online (the answer to ``who(after:limit:)``): `names`
    /// sorted, at most ``ChatCodec/maxWhoLimit``; `onlineCount` counts every user online, the asking one
    /// included; `more` is true when names after the last one listed are online.
    case onlineUsers(names: [String], onlineCount: Int, more: Bool)
    /// Server → client, to sessions that logged in with `presenceChanges`: the users who came `online`
    /// and went `offline` during one presence tick, each list sorted, at most
    /// ``ChatCodec/maxPresenceListed`` names in both together; `unlisted` more changes were not listed
    /// (ask ``who(after:limit:)``); `onlineCount` users are online after the tick, the receiving one
    /// included. A login and a logout of one name within one tick are not listed.
    case presenceChanges(online: [String], offline: [String], onlineCount: Int, unlisted: Int)
    /// Server → client: a request failed. `id` names the numbered message it answers, if any;
    /// `retryAfter` (seconds) comes with ``ChatErrorCode/throttled``.
    case error(code: ChatErrorCode, detail: String, id: UInt64?, retryAfter: UInt64?)

    /// The function code in the frame header of this message.
    public var functionCode: FunctionCode {
        switch self {
        case .login: return .login
        case .loginAccepted: return .loginAccepted
        case .directMessage: return .directMessage
        case .broadcast: return .broadcast
        case .delivery: return .delivery
        case .presence: return .presence
        case .heartbeat: return .heartbeat
        case .heartbeatAck: return .heartbeatAck
        case .stored: return .stored
        case .received: return .received
        case .receipt: return .receipt
        case .historyRequest: return .historyRequest
        case .history: return .history
        case .who: return .who
        case .onlineUsers: return .onlineUsers
        case .presenceChanges: return .presenceChanges
        case .error: return .error
        }
    }
}

/// One message of a ``ChatMessageV2/history(conversation:messages:)``: number `sequence` of the
/// conversation, `text` from `from`, sent at `time` (millisecond precision).
public struct ChatHistoryEntry: Sendable, Equatable {
    /// The message's number in its conversation, 1 to ``ChatCodec/maxExactInteger``.
    public var sequence: UInt64
    /// Who sent it.
    public var from: String
    /// What was sent.
    public var text: String
    /// When the server stored it, to the millisecond.
    public var time: Date

    /// An entry with these fields.
    public init(sequence: UInt64, from: String, text: String, time: Date) {
        self.sequence = sequence
        self.from = from
        self.text = text
        self.time = time
    }
}

extension ChatMessageV2: CustomStringConvertible {
    /// A one-line summary for logs and error lines; texts longer than 40 characters are shortened.
    /// Passwords are never shown.
    public var description: String {
        let short = ChatMessage.short
        switch self {
        case .login(let name, let password, _, let client, let positions, let presenceChanges):
            return "login \(name)\(password == nil ? "" : " with password"), client \(client), \(positions.count) positions"
                + (presenceChanges ? ", presence changes" : "")
        case .loginAccepted(let name, _, let count, _, let stored):
            return "login accepted \(name), \(count) others online, \(stored ? "stored" : "live only")"
        case .directMessage(let id, let to, let text): return "direct message #\(id) to \(to): \(short(text))"
        case .broadcast(let id, let text): return "broadcast #\(id): \(short(text))"
        case .delivery(let from, let text, _, let conversation, let sequence, _):
            return "delivery \(conversation)\(sequence.map { " #\($0)" } ?? "") from \(from): \(short(text))"
        case .presence(let name, let online): return "presence \(name) \(online ? "online" : "offline")"
        case .heartbeat: return "heartbeat"
        case .heartbeatAck: return "heartbeat acknowledgement"
        case .stored(let id, let conversation, let sequence):
            return "stored #\(id) as \(conversation)\(sequence.map { " #\($0)" } ?? " (live only)")"
        case .received(let conversation, let upTo): return "received \(conversation) up to #\(upTo)"
        case .receipt(let conversation, let upTo, let by): return "receipt \(conversation) up to #\(upTo) by \(by)"
        case .historyRequest(let conversation, let limit): return "history request \(conversation), last \(limit)"
        case .history(let conversation, let messages): return "history \(conversation), \(messages.count) messages"
        case .who(let after, let limit): return "who\(after.map { " after \($0)" } ?? ""), up to \(limit)"
        case .onlineUsers(let names, let count, let more):
            return "online users: \(names.count) listed of \(count)\(more ? ", more" : "")"
        case .presenceChanges(let online, let offline, let count, let unlisted):
            return "presence changes: \(online.count) online, \(offline.count) offline, \(unlisted) unlisted; \(count) online now"
        case .error(let code, let detail, let id, _):
            return "error \(code.rawValue)\(id.map { " for #\($0)" } ?? ""): \(detail)"
        }
    }
}
