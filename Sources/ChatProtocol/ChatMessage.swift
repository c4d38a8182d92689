/// Every message of the chat protocol. On the wire each is one seven-byte-header frame (MISSION M3.4):
/// the version, the message's ``FunctionCode``, and a JSON body; see docs/PROTOCOL.md.
///
/// The cases before ``v2(_:)`` are version 1 messages and travel with version field 1, exactly as
/// before version 2 existed; ``v2(_:)`` carries a version 2 message (``ChatMessageV2``) and travels with
/// version field 2. So the version is part of the value: a server answers each connection in the
/// version of its login by sending that connection's kind of message, through one ``ChatCodec``.
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
    /// A message of version 2 of the protocol (numbered messages, acknowledgements, sequence numbers,
    /// history): header version 2 and the version 2 body.
    case v2(ChatMessageV2)

    /// The protocol version this message travels in: ``ChatProtocolVersion/v2`` for ``v2(_:)``,
    /// ``ChatProtocolVersion/v1`` for every other case.
    public var version: ChatProtocolVersion {
        if case .v2 = self { return .v2 }
        return .v1
    }

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
        case .v2(let message): return message.functionCode
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
    /// Version 2 only: the server stored a numbered message.
    case stored = 0x0014
    /// Version 2 only: the client received a conversation up to a sequence number.
    case received = 0x0015
    /// Version 2 only: the other user's client received a conversation up to a sequence number.
    case receipt = 0x0016
    /// Version 2 only: the client asks for the last messages of a conversation.
    case historyRequest = 0x0017
    /// Version 2 only: the last messages of a conversation.
    case history = 0x0018
    /// Version 2 only: the client asks for a page of the users online.
    case who = 0x0019
    /// Version 2 only: a page of the users online, the answer to ``who``.
    case onlineUsers = 0x001A
    /// Version 2 only: who came and went during one presence tick, for sessions that asked for it.
    case presenceChanges = 0x001B

    /// True for the codes that exist in version 2 only (0x0014 to 0x001B); a version 1 frame carrying
    /// one is refused with ``ChatCodec/ProtocolError/unknownFunctionCode(_:)``.
    public var isVersion2Only: Bool { rawValue >= 0x0014 && rawValue <= 0x001B }
}

/// Why the server refused a request, as sent in an ``ChatMessage/error(code:detail:)`` body.
public enum ChatErrorCode: String, Sendable, Codable, Equatable {
    /// The name is logged in already, claimed with a password (version 1), or the same name as a
    /// user's under another spelling (`UserName.Key`: `ANN is too similar to the existing user ann`).
    case nameTaken
    /// The name breaks a rule of the server's `UserName.validate(_:)` (docs/PROTOCOL.md "Names"); the detail is
    /// the ``UserName/Refusal``'s description, naming the rule and the character.
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
    /// Version 2: the name is claimed with a password and the login carried none or another one.
    case badPassword
    /// Version 2: too many failed logins for this name or from this address; the error's `retryAfter`
    /// says after how many seconds to try again.
    case throttled
    /// Version 2: the server cannot store messages now; the message named by the error's `id` was not
    /// stored and stays with the client, which resends it after its next reconnect.
    case storeUnavailable
    /// Version 2: history, stored messages and receipts are for logins with a password; this session
    /// is live only.
    case historyUnavailable
    /// The server holds as many connections as it may (`im-server --max-connections`); this one is
    /// closed. Try again later.
    case serverFull
    /// Messages came faster than the server's rate limit (`--rate`, `--burst`). The message (the error's
    /// `id`, version 2) was not stored or delivered; the error's `retryAfter` says after how many
    /// seconds the server takes messages again (a version 2 client resends it then, from its outbox).
    /// A connection that goes on sending far over the limit is closed.
    case rateLimited
    /// No successful login within the server's login deadline (`--login-timeout`); the connection is
    /// closed.
    case loginTimeout
    /// A frame was started and not finished within the server's frame deadline (`--frame-timeout`);
    /// the connection is closed.
    case frameTimeout
    /// What the client sent is not a valid frame or message (the detail says what, in plain words);
    /// the connection is closed.
    case protocolError
    /// The text is longer than ``ChatCodec/maxTextBytes`` (the detail gives the text's size and the
    /// limit); the message (the error's `id`) is refused for good.
    case messageTooLong
    /// Version 2: the server has more logins waiting than it can answer within its login deadline
    /// (`im-server --login-timeout`; docs/PROTOCOL.md "Logins under load"): this login was not tried.
    /// The error's `retryAfter` says after how many seconds the waiting logins should be through; the
    /// client closes the connection and logs in again on a new one then (plus a random jitter of its
    /// own, so that a crowd does not come back in one instant). Version 1 logins get ``serverFull``.
    case serverBusy
    /// The server is shutting down; the connection is closed. Reconnect (at once, then on the reconnect
    /// schedule): nothing sent is lost, what was not acknowledged is resent.
    case serverShuttingDown

    /// True when a numbered message refused with this code can never succeed, so the client drops it
    /// from its outbox (``unknownRecipient``, ``badRequest``, ``messageTooLong``); with any other code it
    /// stays there and is resent: after `retryAfter` for ``rateLimited``, else after the next reconnect.
    public var refusesForGood: Bool { self == .unknownRecipient || self == .badRequest || self == .messageTooLong }
}

extension ChatMessage: CustomStringConvertible {
    /// A one-line summary for logs and error lines; texts longer than 40 characters are shortened.
    public var description: String {
        let short = ChatMessage.short
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
        case .v2(let message): return message.description
        }
    }

    /// `text` quoted, shortened to its first 40 characters (and its length) when longer.
    static func short(_ text: String) -> String {
        text.count <= 40 ? text.debugDescription : "\(String(text.prefix(40)).debugDescription)… (\(text.count) characters)"
    }
}
