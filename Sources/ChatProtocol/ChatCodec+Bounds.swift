extension ChatCodec {
    /// The most names a version 2 `who` may ask for, and an `onlineUsers` page may hold: 100 (as many as
    /// a login reply lists, ``ChatServer/maxOnlineListed``).
    public static let maxWhoLimit = 100
    /// The most names a version 2 `presenceChanges` lists, `online` and `offline` together: 100.
    public static let maxPresenceListed = 100

    /// Checks the bounds of a version 2 message (docs/PROTOCOL.md "Version 2", "Bounds"): ids and
    /// sequence numbers 1 to ``maxExactInteger``, positions and `retryAfter` 0 to it, conversation ids
    /// well formed, history limits and lengths 1 to ``maxHistoryLimit`` (a history may be empty), at most
    /// ``maxPositions`` positions, a client instance of 32 lowercase hex digits, a password of 1 to
    /// ``maxPasswordBytes`` bytes; who limits 1 to ``maxWhoLimit``, at most ``maxWhoLimit`` names in an
    /// online users page and ``maxPresenceListed`` in presence changes, counts 0 to ``maxExactInteger``.
    /// Times are checked where they are converted (``BodiesV2``).
    ///
    /// With `checkingNames` (decoding), each user name of a who, online users or presence changes body
    /// and of a conversation id must also be well formed (``UserName/isWellFormed(_:)``). Encoding
    /// leaves names alone: what a server sends are the names it admitted, and a client's names are
    /// checked by the server that receives them; so no delivery pays for its names again.
    /// - Throws: a ``ProtocolError`` naming a value out of bounds.
    static func check(_ message: ChatMessageV2, checkingNames: Bool) throws(ProtocolError) {
        func checkConversation(_ text: String) throws(ProtocolError) {
            guard isConversation(text, checkingNames: checkingNames) else { throw .invalidConversation(text) }
        }
        func checkName(_ name: String) throws(ProtocolError) {
            guard !checkingNames || UserName.isWellFormed(name) else { throw .invalidName(name) }
        }
        switch message {
        case .login(_, let password, _, let client, let positions, _):
            if let password {
                let bytes = password.utf8.count
                guard bytes >= 1, bytes <= maxPasswordBytes else { throw .invalidPasswordLength(bytes: bytes) }
            }
            guard isClientInstance(client) else { throw .invalidClientInstance(client) }
            guard positions.count <= maxPositions else { throw .tooManyPositions(positions.count) }
            for (conversation, position) in positions {
                try checkConversation(conversation)
                try checkNumber(position, key: "positions", from: 0)
            }
        case .directMessage(let id, _, _), .broadcast(let id, _):
            try checkNumber(id, key: "id")
        case .delivery(_, _, _, let conversation, let sequence, _):
            try checkConversation(conversation)
            if let sequence { try checkNumber(sequence, key: "seq") }
        case .stored(let id, let conversation, let sequence):
            try checkNumber(id, key: "id")
            try checkConversation(conversation)
            if let sequence { try checkNumber(sequence, key: "seq") }
        case .received(let conversation, let upTo), .receipt(let conversation, let upTo, _):
            try checkConversation(conversation)
            try checkNumber(upTo, key: "seq")
        case .historyRequest(let conversation, let limit):
            try checkConversation(conversation)
            guard limit >= 1, limit <= maxHistoryLimit else { throw .limitOutOfRange(limit) }
        case .history(let conversation, let messages):
            try checkConversation(conversation)
            guard messages.count <= maxHistoryLimit else { throw .tooManyHistoryMessages(messages.count) }
            for message in messages { try checkNumber(message.sequence, key: "seq") }
        case .error(_, _, let id, let retryAfter):
            if let id { try checkNumber(id, key: "id") }
            if let retryAfter { try checkNumber(retryAfter, key: "retryAfter", from: 0) }
        case .who(let after, let limit):
            if let after { try checkName(after) }
            guard limit >= 1, limit <= maxWhoLimit else { throw .limitOutOfRange(limit) }
        case .onlineUsers(let names, let count, _):
            guard names.count <= maxWhoLimit else { throw .tooManyNames(key: "names", count: names.count) }
            for name in names { try checkName(name) }
            try checkCount(count, key: "onlineCount")
        case .presenceChanges(let online, let offline, let count, let unlisted):
            let listed = online.count + offline.count
            guard listed <= maxPresenceListed else { throw .tooManyNames(key: "online and offline", count: listed) }
            for name in online { try checkName(name) }
            for name in offline { try checkName(name) }
            try checkCount(count, key: "onlineCount")
            try checkCount(unlisted, key: "unlisted")
        case .loginAccepted, .presence, .heartbeat, .heartbeatAck:
            break
        }
    }

    /// Throws unless `value` is 0 to ``maxExactInteger``.
    private static func checkCount(_ value: Int, key: String) throws(ProtocolError) {
        guard value >= 0, UInt64(value) <= maxExactInteger else { throw .countOutOfRange(key: key, value: value) }
    }

    /// Throws unless `value` is `from` (default 1) to ``maxExactInteger``.
    private static func checkNumber(_ value: UInt64, key: String, from lowest: UInt64 = 1) throws(ProtocolError) {
        guard value >= lowest, value <= maxExactInteger else { throw .numberOutOfRange(key: key, value: value) }
    }

    /// True for a conversation id in its text form: `room`, or `direct:` then two user names separated
    /// by one space (U+0020), each not empty and, with `checkingNames`, well formed
    /// (``UserName/isWellFormed(_:)``: so no other white space either). The order of the two names is
    /// the server's to check.
    static func isConversation(_ text: String, checkingNames: Bool = true) -> Bool {
        if text == "room" { return true }
        var text = text
        return text.withUTF8 { bytes in
            // On every `received` and delivery: a loop over the bytes, no substrings.
            let prefix: StaticString = "direct:"
            let prefixLength = prefix.utf8CodeUnitCount
            guard bytes.count > prefixLength,
                UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefixLength).elementsEqual(bytes.prefix(prefixLength)),
                let space = bytes[prefixLength...].firstIndex(of: UInt8(ascii: " "))
            else { return false }
            let first = UnsafeBufferPointer(rebasing: bytes[prefixLength..<space])
            let second = UnsafeBufferPointer(rebasing: bytes[(space + 1)...])
            guard !first.isEmpty, !second.isEmpty, !second.contains(UInt8(ascii: " ")) else { return false }
            return !checkingNames || UserName.isWellFormed(utf8: first) && UserName.isWellFormed(utf8: second)
        }
    }

    /// True for exactly ``clientInstanceLength`` (32) characters, each `0`–`9` or `a`–`f`.
    static func isClientInstance(_ text: String) -> Bool {
        text.utf8.count == clientInstanceLength
            && text.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
