/// Which of the messages numbered 1…`count` one stream has seen (acknowledged as stored, or
/// delivered), and how often: the exactly-once check of a run. 1 byte a message.
struct MessageLedger: Sendable {
    private var seen: [UInt8]
    /// Messages seen at least once.
    private(set) var distinct = 0
    /// Sightings after the first of a message (each a duplicate).
    private(set) var duplicates = 0
    /// Sightings of an id outside 1…`count` (never sent).
    private(set) var unknown = 0

    /// A ledger for ids 1…`count`, none seen.
    init(count: Int) { seen = [UInt8](repeating: 0, count: count + 1) }

    /// The ids this ledger covers: 1…`count`.
    var count: Int { seen.count - 1 }

    /// Counts a sighting of `id`; true when it is the first.
    @discardableResult
    mutating func record(_ id: UInt64) -> Bool {
        guard id >= 1, id < UInt64(seen.count) else {
            unknown += 1
            return false
        }
        let index = Int(id)
        if seen[index] == 0 {
            seen[index] = 1
            distinct += 1
            return true
        }
        duplicates += 1
        return false
    }

    /// Whether `id` has been seen.
    func contains(_ id: UInt64) -> Bool { id >= 1 && id < UInt64(seen.count) && seen[Int(id)] != 0 }
}

/// A client's per-conversation positions (docs/PROTOCOL.md "Receiving"): the highest sequence number
/// received in order, and how each new delivery relates to it.
struct ConversationPositions: Sendable {
    /// How a delivery numbered `sequence` relates to its conversation's position.
    enum Arrival: Equatable, Sendable {
        /// `sequence` = position + 1: the next one; the position moves to it.
        case next
        /// `sequence` ≤ position: received before (a resend).
        case duplicate
        /// `sequence` > position + 1: `missing` numbers were skipped. The position moves to `sequence`
        /// anyway (a real client would reconnect; a bench counts it and goes on).
        case gap(missing: UInt64)
    }

    private(set) var positions: [String: UInt64] = [:]

    /// Makes `sequence` the next expected number of `conversation` when nothing of it has arrived yet:
    /// a new user's room starts at its first login (docs/PROTOCOL.md), not at 1.
    mutating func startIfNew(_ conversation: String, at sequence: UInt64) {
        if positions[conversation] == nil, sequence > 0 { positions[conversation] = sequence - 1 }
    }

    /// Classifies the delivery numbered `sequence` of `conversation` and moves the position.
    mutating func arrive(_ conversation: String, sequence: UInt64) -> Arrival {
        let position = positions[conversation] ?? 0
        if sequence <= position { return .duplicate }
        positions[conversation] = sequence
        return sequence == position + 1 ? .next : .gap(missing: sequence - position - 1)
    }
}
