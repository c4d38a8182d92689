/// The client's receive side of reliable delivery, as a pure state machine: per conversation, the
/// highest sequence passed to the app, which deliveries are new, duplicate or early, and which
/// cumulative acknowledgements are owed.
///
/// ```
/// position 5:  sequence 3 → duplicate (dropped, "up to 5" acknowledged again)
///              sequence 6 → deliver   (position 6, "up to 6" owed)
///              sequence 8 → gap       (dropped: 7 is missing; the server resends from the position
///                                      after the next login)
/// ```
///
/// A conversation at position 0 (nothing received yet) accepts any first sequence and starts there:
/// a server begins a conversation where the user joined it or where its retained history starts, not
/// necessarily at 1.
///
/// The first delivery of a conversation on a connection is accepted even when it skips sequences:
/// after a login that reported the position, the server sends from the position on, so what it skips
/// it no longer has (its retention removed them). Counted in ``skipped``. A gap later on the same
/// connection is a real gap (``Verdict/gap(expected:)``).
///
/// Acknowledgements are owed per conversation and collected by ``takeAcknowledgements()``: however many
/// deliveries arrive in between, one acknowledgement per conversation, for its position then.
public struct ReceiveTracker: Sendable {
    /// What to do with one delivery.
    public enum Verdict: Sendable, Equatable {
        /// The next in order: pass it on; the position moved to its sequence.
        case deliver
        /// Already passed on (sequence at or below the position): drop it; it is acknowledged again.
        case duplicate
        /// Sequences between the position and this one are missing: drop it; `expected` is the sequence
        /// that was due.
        case gap(expected: UInt64)
    }

    /// Per conversation, the highest sequence passed on; absent means 0.
    public private(set) var positions: DeliveryPositions
    /// Deliveries dropped as duplicates, since creation.
    public private(set) var duplicates = 0
    /// Deliveries dropped because they came early (a gap before them), since creation.
    public private(set) var gaps = 0
    /// Sequences skipped by a conversation's first delivery on a connection (no longer stored), since creation.
    public private(set) var skipped: UInt64 = 0
    /// Conversations that had a delivery on the current connection.
    private var seenOnConnection: Set<String> = []
    /// Conversations owing an acknowledgement.
    private var owed: Set<String> = []
    /// Conversations whose position changed since ``takeChangedPositions()``.
    private var changed: Set<String> = []

    /// A tracker continuing from `positions` (from a ``DeliveryStateStore``, say).
    public init(positions: DeliveryPositions = [:]) {
        self.positions = positions.filter { $0.value > 0 }
    }

    /// The verdict on a delivery numbered `sequence` in `conversation`, and the position and owed
    /// acknowledgement updated accordingly.
    public mutating func receive(conversation: String, sequence: UInt64) -> Verdict {
        let position = positions[conversation] ?? 0
        if position > 0 && sequence <= position || sequence == 0 {
            duplicates += 1
            if position > 0 { owed.insert(conversation) }
            return .duplicate
        }
        let isFirstOnConnection = seenOnConnection.insert(conversation).inserted
        if position > 0 && sequence > position + 1 && isFirstOnConnection {
            skipped += sequence - position - 1
        } else if position > 0 && sequence != position + 1 {
            gaps += 1
            owed.insert(conversation)
            return .gap(expected: position + 1)
        }
        positions[conversation] = sequence
        owed.insert(conversation)
        changed.insert(conversation)
        return .deliver
    }

    /// The connection ended: the next one starts from the positions reported in its login, and its
    /// first delivery of each conversation may skip what the server no longer has.
    public mutating func connectionEnded() {
        seenOnConnection.removeAll()
    }

    /// True when some conversation owes an acknowledgement.
    public var owesAcknowledgements: Bool { !owed.isEmpty }

    /// The acknowledgements owed, one per conversation ("everything up to `sequence`"), in conversation
    /// order; afterwards none is owed.
    public mutating func takeAcknowledgements() -> [(conversation: String, sequence: UInt64)] {
        let taken = owed.sorted().compactMap { conversation in
            positions[conversation].map { (conversation: conversation, sequence: $0) }
        }
        owed.removeAll()
        return taken
    }

    /// The positions that changed since the last call (to persist), and forgets that they changed.
    public mutating func takeChangedPositions() -> DeliveryPositions {
        var taken: DeliveryPositions = [:]
        for conversation in changed { taken[conversation] = positions[conversation] }
        changed.removeAll()
        return taken
    }
}
