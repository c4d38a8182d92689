/// Every message of the chat protocol. On the wire each is one seven-byte-header frame (MISSION M3.4):
/// version 1, the message's ``FunctionCode``, and a JSON body; see docs/PROTOCOL.md.
public enum ChatMessage: Sendable, Equatable {
    /// Client → server: log in as `name`. `resumeToken`, from an earlier ``loginAccepted(name:online:resumeToken:)``,
    /// lets a reconnecting client take its name back from its own stale session.
    case login(name: String, resumeToken: String?)
    /// Server → client: logged in. `online` lists other users logged in, sorted, at most
    /// ``ChatServer/maxOnlineListed`` of them; `onlineCount` counts them all.
    case loginAccepted(name: String, online: [String], onlineCount: Int, resumeToken: String)
    /// Client → server: send `text` to user `to`.
    case directMessage(to: String, text: String)
    /// Client → server: send `text` to every other user.
    case broadcast(text: String)
    /// Server → client: `text` from user `from`; `isDirect` is true for a direct message, false for a broadcast.
    case delivery(from: String, text: String, isDirect: Bool)
    /// Server → client: user `name` logged in (`online` true) or left (false).
    case presence(name: String, online: Bool)
    /// Client → server: the heartbeat (MISSION M4).
    case heartbeat
    /// Server → client: the heartbeat's acknowledgement.
    case heartbeatAck
    /// Server → client: a request failed.
    case error(code: ChatErrorCode, detail: String)

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
        case .error: return .error
        }
    }
}

/// The function code field (2 bytes, big-endian) of the chat's seven-byte header.
public enum FunctionCode: UInt16, Sendable, CaseIterable {
    case login = 0x0001
    case loginAccepted = 0x0002
    case directMessage = 0x0010
    case broadcast = 0x0011
    case delivery = 0x0012
    case presence = 0x0013
    case heartbeat = 0x0020
    case heartbeatAck = 0x0021
    case error = 0x00F0
}

/// Why the server refused a request, as sent in an ``ChatMessage/error(code:detail:)`` body.
public enum ChatErrorCode: String, Sendable, Codable, Equatable {
    /// Another user is logged in with that name.
    case nameTaken
    /// The name is empty, longer than 32 characters, or contains whitespace or control characters.
    case invalidName
    /// No user of that name is logged in.
    case unknownRecipient
    /// Chat messages before a successful login.
    case notLoggedIn
    /// A second login on the same connection.
    case alreadyLoggedIn
    /// Another connection logged in with this name and its resume token; this one is closed.
    case replaced
    /// The request makes no sense: an empty text, or a message only the server sends.
    case badRequest
}

extension ChatMessage: CustomStringConvertible {
    /// A one-line summary for logs and error lines; texts longer than 40 characters are shortened.
    public var description: String {
        func short(_ text: String) -> String {
            text.count <= 40 ? text.debugDescription : "\(String(text.prefix(40)).debugDescription)… (\(text.count) characters)"
        }
        switch self {
        case .login(let name, _): return "login \(name)"
        case .loginAccepted(let name, _, let count, _): return "login accepted \(name), \(count) others online"
        case .directMessage(let to, let text): return "direct message to \(to): \(short(text))"
        case .broadcast(let text): return "broadcast: \(short(text))"
        case .delivery(let from, let text, _): return "delivery from \(from): \(short(text))"
        case .presence(let name, let online): return "presence \(name) \(online ? "online" : "offline")"
        case .heartbeat: return "heartbeat"
        case .heartbeatAck: return "heartbeat acknowledgement"
        case .error(let code, let detail): return "error \(code.rawValue): \(detail)"
        }
    }
}
