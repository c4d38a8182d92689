import ChatProtocol
import LongLink

/// What a stored session starts with, read from the store at its login (off the routing queue:
/// Router+LoginReads): its delivery window, and the receipts to send it.
struct StoredSessionStart: Sendable {
    /// How far the other user of a direct conversation has received it (a receipt: ✓✓ for what was
    /// sent while this user was away).
    struct Receipt: Sendable, Equatable {
        let conversation: String
        let upTo: UInt64
        let by: String
    }

    /// Every conversation of the user (the room and each direct conversation it has), from where the
    /// client says it is (the login's positions), or where the server last saw it acknowledge when the
    /// client does not say (a new installation), up to the conversation's head; the room never before
    /// the user's first login. At most ``Router/deliveryWindow`` deliveries unacknowledged.
    var window: DeliveryWindow
    /// Each conversation's start and head, for the trace log.
    let ranges: [String: ClosedRange<UInt64>]
    /// One per direct conversation whose other user has received anything (position above 0).
    let receipts: [Receipt]

    /// Reads the start of `record`'s stored session from `store`: its direct conversations, then each
    /// conversation's head and the user's position (unless `positions` has it), and the other user's
    /// position in each direct conversation (a failed read of that one only leaves its receipt out),
    /// all at once (``MessageStore/conversationStarts(of:in:known:)``).
    /// - Throws: what the store throws.
    static func read(from store: any MessageStore, record: UserRecord, positions: [String: UInt64]) throws -> StoredSessionStart {
        let name = record.name
        var conversations = try store.directConversations(of: name)
        conversations.append(.room)
        let reads = try store.conversationStarts(of: name, in: conversations, known: positions)
        var starts: [String: UInt64] = [:]
        var ranges: [String: ClosedRange<UInt64>] = [:]
        var receipts: [Receipt] = []
        for (conversation, read) in zip(conversations, reads) {
            let key = conversation.description
            let head = read.head
            let start = conversation == .room ? max(read.position, record.roomStart) : read.position
            starts[key] = min(start, head)
            ranges[key] = min(start, head)...head
            if let other = conversation.otherUser(than: name), let position = read.otherPosition, position > 0 {
                receipts.append(Receipt(conversation: key, upTo: position, by: other))
            }
        }
        var window = DeliveryWindow(positions: starts, limit: Router.deliveryWindow)
        for (conversation, range) in ranges { window.available(conversation: conversation, upTo: range.upperBound) }
        return StoredSessionStart(window: window, ranges: ranges, receipts: receipts)
    }

    /// `CONVERSATION START..HEAD` for each conversation, sorted.
    var description: String {
        ranges.keys.sorted().map { "\($0) \(ranges[$0]?.lowerBound ?? 0)..\(ranges[$0]?.upperBound ?? 0)" }.joined(separator: ", ")
    }
}
