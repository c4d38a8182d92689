import Foundation

/// The JSON bodies of version 2 (docs/PROTOCOL.md "Version 2"), one `Codable` struct per function code
/// whose body differs from version 1; presence and the heartbeats keep their version 1 bodies. Every
/// message is checked against the bounds (``ChatCodec/check(_:checkingNames:)``) after decoding and
/// before encoding (its user names only after decoding).
enum BodiesV2 {
    struct Login: Codable {
        var name: String
        var password: String?
        var resumeToken: String?
        var client: String
        var positions: [String: UInt64]?  // absent = {}
        var presenceChanges: Bool?  // absent = false; sent only when true
    }
    struct LoginAccepted: Codable {
        var name: String
        var online: [String]
        var onlineCount: Int
        var resumeToken: String
        var stored: Bool
    }
    struct DirectMessage: Codable { var id: UInt64; var to: String; var text: String }
    struct Broadcast: Codable { var id: UInt64; var text: String }
    struct Delivery: Codable {
        var from: String
        var text: String
        var direct: Bool
        var conversation: String
        var seq: UInt64?
        var time: UInt64
    }
    struct Stored: Codable { var id: UInt64; var conversation: String; var seq: UInt64? }
    struct Received: Codable { var conversation: String; var seq: UInt64 }
    struct Receipt: Codable { var conversation: String; var seq: UInt64; var by: String }
    struct HistoryRequest: Codable { var conversation: String; var limit: Int }
    struct Entry: Codable { var seq: UInt64; var from: String; var text: String; var time: UInt64 }
    struct History: Codable { var conversation: String; var messages: [Entry] }
    struct Who: Codable { var after: String?; var limit: Int }
    struct OnlineUsers: Codable { var more: Bool; var names: [String]; var onlineCount: Int }
    struct PresenceChanges: Codable { var offline: [String]; var online: [String]; var onlineCount: Int; var unlisted: Int }
    struct Failure: Codable { var code: ChatErrorCode; var detail: String; var id: UInt64?; var retryAfter: UInt64? }

    /// The JSON body of `message`, after checking its bounds (not its names).
    /// - Throws: ``ChatCodec/ProtocolError`` for a value out of bounds; what `encoder` throws.
    static func encode(_ message: ChatMessageV2, with encoder: JSONEncoder) throws -> Data {
        try ChatCodec.check(message, checkingNames: false)
        switch message {
        case .login(let name, let password, let token, let client, let positions, let presenceChanges):
            return try encoder.encode(
                Login(
                    name: name, password: password, resumeToken: token, client: client,
                    positions: positions, presenceChanges: presenceChanges ? true : nil))
        case .loginAccepted(let name, let online, let count, let token, let stored):
            if let body = loginAcceptedBody(name: name, online: online, onlineCount: count, resumeToken: token, stored: stored) {
                return body
            }
            return try encoder.encode(
                LoginAccepted(
                    name: name, online: online, onlineCount: count,
                    resumeToken: token, stored: stored))
        case .directMessage(let id, let to, let text): return try encoder.encode(DirectMessage(id: id, to: to, text: text))
        case .broadcast(let id, let text): return try encoder.encode(Broadcast(id: id, text: text))
        case .delivery(let from, let text, let direct, let conversation, let sequence, let time):
            return try encoder.encode(
                Delivery(
                    from: from, text: text, direct: direct, conversation: conversation,
                    seq: sequence, time: try milliseconds(time)))
        case .presence(let name, let online): return try encoder.encode(Bodies.Presence(name: name, online: online))
        case .heartbeat, .heartbeatAck: return try encoder.encode(Bodies.Empty())
        case .stored(let id, let conversation, let sequence):
            return try encoder.encode(Stored(id: id, conversation: conversation, seq: sequence))
        case .received(let conversation, let upTo): return try encoder.encode(Received(conversation: conversation, seq: upTo))
        case .receipt(let conversation, let upTo, let by):
            return try encoder.encode(Receipt(conversation: conversation, seq: upTo, by: by))
        case .historyRequest(let conversation, let limit):
            return try encoder.encode(HistoryRequest(conversation: conversation, limit: limit))
        case .history(let conversation, let messages):
            let entries = try messages.map {
                Entry(seq: $0.sequence, from: $0.from, text: $0.text, time: try milliseconds($0.time))
            }
            return try encoder.encode(History(conversation: conversation, messages: entries))
        case .who(let after, let limit): return try encoder.encode(Who(after: after, limit: limit))
        case .onlineUsers(let names, let count, let more):
            return try encoder.encode(OnlineUsers(more: more, names: names, onlineCount: count))
        case .presenceChanges(let online, let offline, let count, let unlisted):
            return try encoder.encode(PresenceChanges(offline: offline, online: online, onlineCount: count, unlisted: unlisted))
        case .error(let code, let detail, let id, let retryAfter):
            return try encoder.encode(Failure(code: code, detail: detail, id: id, retryAfter: retryAfter))
        }
    }

    /// The message in a version 2 body, its bounds checked.
    /// - Throws: `DecodingError` for JSON that is not the body `code` requires; ``ChatCodec/ProtocolError``
    ///   for a value out of bounds.
    static func decode(_ code: FunctionCode, _ body: Data) throws -> ChatMessageV2 {
        let decoder = JSONDecoder()
        let message: ChatMessageV2
        switch code {
        case .login:
            let login = try decoder.decode(Login.self, from: body)
            message = .login(
                name: login.name, password: login.password, resumeToken: login.resumeToken,
                clientInstance: login.client, positions: login.positions ?? [:],
                presenceChanges: login.presenceChanges ?? false)
        case .loginAccepted:
            let accepted = try decoder.decode(LoginAccepted.self, from: body)
            message = .loginAccepted(
                name: accepted.name, online: accepted.online, onlineCount: accepted.onlineCount,
                resumeToken: accepted.resumeToken, stored: accepted.stored)
        case .directMessage:
            let direct = try decoder.decode(DirectMessage.self, from: body)
            message = .directMessage(id: direct.id, to: direct.to, text: direct.text)
        case .broadcast:
            let broadcast = try decoder.decode(Broadcast.self, from: body)
            message = .broadcast(id: broadcast.id, text: broadcast.text)
        case .delivery:
            let delivery = try decoder.decode(Delivery.self, from: body)
            message = .delivery(
                from: delivery.from, text: delivery.text, isDirect: delivery.direct,
                conversation: delivery.conversation, sequence: delivery.seq,
                time: try date(milliseconds: delivery.time))
        case .presence:
            let presence = try decoder.decode(Bodies.Presence.self, from: body)
            message = .presence(name: presence.name, online: presence.online)
        case .heartbeat: message = .heartbeat
        case .heartbeatAck: message = .heartbeatAck
        case .stored:
            let stored = try decoder.decode(Stored.self, from: body)
            message = .stored(id: stored.id, conversation: stored.conversation, sequence: stored.seq)
        case .received:
            let received = try decoder.decode(Received.self, from: body)
            message = .received(conversation: received.conversation, upTo: received.seq)
        case .receipt:
            let receipt = try decoder.decode(Receipt.self, from: body)
            message = .receipt(conversation: receipt.conversation, upTo: receipt.seq, by: receipt.by)
        case .historyRequest:
            let request = try decoder.decode(HistoryRequest.self, from: body)
            message = .historyRequest(conversation: request.conversation, limit: request.limit)
        case .history:
            let history = try decoder.decode(History.self, from: body)
            let entries = try history.messages.map {
                ChatHistoryEntry(sequence: $0.seq, from: $0.from, text: $0.text, time: try date(milliseconds: $0.time))
            }
            message = .history(conversation: history.conversation, messages: entries)
        case .who:
            let who = try decoder.decode(Who.self, from: body)
            message = .who(after: who.after, limit: who.limit)
        case .onlineUsers:
            let page = try decoder.decode(OnlineUsers.self, from: body)
            message = .onlineUsers(names: page.names, onlineCount: page.onlineCount, more: page.more)
        case .presenceChanges:
            let changes = try decoder.decode(PresenceChanges.self, from: body)
            message = .presenceChanges(
                online: changes.online, offline: changes.offline, onlineCount: changes.onlineCount,
                unlisted: changes.unlisted)
        case .error:
            let failure = try decoder.decode(Failure.self, from: body)
            message = .error(code: failure.code, detail: failure.detail, id: failure.id, retryAfter: failure.retryAfter)
        }
        try ChatCodec.check(message, checkingNames: true)
        return message
    }

    /// `time` as whole milliseconds since 1970-01-01 00:00 UTC, rounded to the nearest.
    /// - Throws: ``ChatCodec/ProtocolError/timeOutOfRange(_:)`` before 1970 or past
    ///   ``ChatCodec/maxExactInteger`` ms.
    static func milliseconds(_ time: Date) throws -> UInt64 {
        let milliseconds = (time.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds >= 0, milliseconds <= Double(ChatCodec.maxExactInteger) else {
            throw ChatCodec.ProtocolError.timeOutOfRange(time)
        }
        return UInt64(milliseconds)
    }

    /// The date `milliseconds` after 1970-01-01 00:00 UTC.
    /// - Throws: ``ChatCodec/ProtocolError/numberOutOfRange(key:value:)`` past ``ChatCodec/maxExactInteger``.
    static func date(milliseconds: UInt64) throws -> Date {
        guard milliseconds <= ChatCodec.maxExactInteger else {
            throw ChatCodec.ProtocolError.numberOutOfRange(key: "time", value: milliseconds)
        }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
