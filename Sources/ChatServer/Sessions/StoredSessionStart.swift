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
    /// position in each direct conversation (a failed read of that one only leaves its receipt out).
    /// - Throws: what the store throws.
    static func read(from store: any MessageStore, record: UserRecord, positions: [String: UInt64]) throws -> StoredSessionStart {
        let name = record.name
        var conversations = try store.directConversations(of: name)
        conversations.append(.room)
        var starts: [String: UInt64] = [:]
        var ranges: [String: ClosedRange<UInt64>] = [:]
        var receipts: [Receipt] = []
        for conversation in conversations {
            let key = conversation.description
            let head = try store.head(of: conversation)
            var start = try positions[key] ?? store.position(of: name, in: conversation)
            if conversation == .room { start = max(start, record.roomStart) }
            starts[key] = min(start, head)
            ranges[key] = min(start, head)...head
            if case .direct(let first, let second) = conversation, first != second {
                let other = first == name ? second : first
                if let position = try? store.position(of: other, in: conversation), position > 0 {
                    receipts.append(Receipt(conversation: key, upTo: position, by: other))
                }
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
