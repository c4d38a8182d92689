/// One conversation of the chat, an append-only log with its own sequence numbers (from 1, no gaps):
/// the room everybody's broadcasts go to, or the direct messages between two users.
///
/// Text form (on the wire, in positions and in the store file): `room`, and `direct:` followed by the
/// two names sorted and separated by one space (`direct:ann bob`). User names never contain
/// whitespace, so the form is unambiguous. A user may write to themself: `direct:ann ann`.
///
/// The two names of ``direct(_:_:)`` are kept sorted (Swift's `String` order): make one with
/// ``init(between:and:)`` or ``init(_:)``. The stores refuse a `.direct` written with the names the
/// other way round (``StoreError/invalidConversation(_:)``), so each conversation has one identity.
public enum ConversationID: Hashable, Sendable, Comparable {
    /// The room: every broadcast.
    case room
    /// The direct messages between two users, names sorted.
    case direct(String, String)

    /// The direct conversation between `first` and `second`, in either order.
    public init(between first: String, and second: String) {
        self = first <= second ? .direct(first, second) : .direct(second, first)
    }

    /// Parses the text form; nil for anything else, including `direct:` names that are empty, contain
    /// whitespace, or are not sorted (`direct:bob ann`).
    public init?(_ text: String) {
        if text == "room" {
            self = .room
            return
        }
        guard text.hasPrefix("direct:") else { return nil }
        let names = text.dropFirst("direct:".count).split(separator: " ", omittingEmptySubsequences: false)
        guard names.count == 2,
            names.allSatisfy({ !$0.isEmpty && !$0.contains(where: \.isWhitespace) }),
            names[0] <= names[1]
        else { return nil }
        self = .direct(String(names[0]), String(names[1]))
    }

    /// Whether the names of a `.direct` are sorted, as ``init(between:and:)`` makes them (`.room`: true).
    public var isNormalized: Bool {
        guard case .direct(let first, let second) = self else { return true }
        return first <= second
    }

    /// The two users of a direct conversation; nil for the room.
    public var members: (String, String)? {
        guard case .direct(let first, let second) = self else { return nil }
        return (first, second)
    }

    /// Whether `user` is one of the two users of a direct conversation (false for the room).
    public func hasMember(_ user: String) -> Bool {
        guard let (first, second) = members else { return false }
        return first == user || second == user
    }
}

extension ConversationID: CustomStringConvertible {
    /// The text form: `room` or `direct:ann bob`.
    public var description: String {
        switch self {
        case .room: return "room"
        case .direct(let first, let second): return "direct:\(first) \(second)"
        }
    }
}
