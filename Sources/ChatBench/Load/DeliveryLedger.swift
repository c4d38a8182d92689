/// The exactly-once, in-order check of a load run (``LoadRun``): every message sent, who should get
/// it, and every delivery that arrived. Messages are numbered 1, 2, 3… in the order the run sends them,
/// across all users (the number travels at the start of the text, ``MessageText``).
///
/// A delivery of message `id` from `sender` to `receiver` counts when `id` is above the last one
/// `receiver` got from `sender` in the same kind of conversation (direct or room): each sender sends in
/// increasing order, so the deliveries of one conversation must arrive in increasing order. The same
/// id again is a **duplicate**; a lower one is **out of order** (not counted as delivered, so it is
/// missing too). At the end, **missing** = expected deliveries − counted ones, per message.
struct DeliveryLedger: Sendable {
    /// What a message is.
    enum Kind: UInt8, Sendable {
        /// A direct message between two run users.
        case direct
        /// A broadcast to the room.
        case broadcast
        /// A direct message between the two probe users (crowd runs), reported apart.
        case probe
    }

    /// One message sent.
    struct Sent: Sendable {
        var sender: Int32
        /// The recipient's index, −1 for a broadcast.
        var recipient: Int32
        var kind: Kind
        /// When it was written, nanoseconds on `MonotonicClock`.
        var time: UInt64
        /// Deliveries it should have: 1 for a direct message, the other users online for a broadcast;
        /// 0 once the server refused it with an error.
        var expected: UInt32
        /// Deliveries counted.
        var delivered: UInt32 = 0
        /// The server answered `stored` for it (version 2).
        var isAcknowledged = false
    }

    /// How one delivery was counted.
    enum Arrival: Equatable, Sendable {
        /// Counted: `latency` nanoseconds after it was sent.
        case delivered(kind: Kind, latency: UInt64)
        /// The sender's own message back to it (a stored session sees its whole conversation).
        case echo
        /// The same id as the last one from that sender in that kind of conversation.
        case duplicate
        /// A lower id than the last one from that sender in that kind of conversation.
        case outOfOrder
        /// Not meant for this receiver, or of the other kind, or more deliveries than expected.
        case misdelivered
        /// An id the run never sent.
        case unknown
    }

    private(set) var messages: [Sent] = []
    /// Per receiver: the last id counted per (sender, kind of conversation).
    private var last: [[Int: UInt64]]
    private(set) var duplicates = 0, outOfOrder = 0, misdelivered = 0, unknown = 0, echoes = 0
    /// Deliveries counted, and deliveries expected of messages not refused.
    private(set) var delivered = 0, expected = 0
    /// Messages refused by an error answering their id.
    private(set) var refused = 0
    /// `stored` answers: first ones, and repeats or unknown ids.
    private(set) var acknowledged = 0, acknowledgementErrors = 0

    /// A ledger for `receivers` connections (indices 0..<receivers).
    init(receivers: Int) { last = Array(repeating: [:], count: receivers) }

    /// Expected deliveries not (yet) counted.
    var missing: Int { expected - delivered }

    /// Records a message sent now and returns its id.
    mutating func send(_ kind: Kind, from sender: Int, to recipient: Int?, expecting deliveries: Int, at time: UInt64) -> UInt64 {
        messages.append(
            Sent(sender: Int32(sender), recipient: Int32(recipient ?? -1), kind: kind, time: time, expected: UInt32(deliveries)))
        expected += deliveries
        return UInt64(messages.count)
    }

    /// The message `id`, if the run sent it.
    func message(_ id: UInt64) -> Sent? { id >= 1 && id <= UInt64(messages.count) ? messages[Int(id) - 1] : nil }

    /// The server refused message `id` (an error naming it): its deliveries are no longer expected.
    mutating func refuse(_ id: UInt64) {
        guard let sent = message(id), sent.expected > 0 else { return }
        expected -= Int(sent.expected) - Int(sent.delivered)
        messages[Int(id) - 1].expected = sent.delivered
        refused += 1
    }

    /// The server answered `stored` for message `id`; true when it is the first answer.
    @discardableResult
    mutating func acknowledge(_ id: UInt64) -> Bool {
        guard let sent = message(id), !sent.isAcknowledged else {
            acknowledgementErrors += 1
            return false
        }
        messages[Int(id) - 1].isAcknowledged = true
        acknowledged += 1
        return true
    }

    /// Counts a delivery of message `id` from `sender` to `receiver` (`isDirect`: a direct conversation)
    /// read at `now`.
    mutating func arrive(_ id: UInt64, from sender: Int, to receiver: Int, isDirect: Bool, at now: UInt64) -> Arrival {
        guard let sent = message(id), receiver >= 0, receiver < last.count else {
            unknown += 1
            return .unknown
        }
        if sender == receiver, Int(sent.sender) == sender {
            echoes += 1
            return .echo
        }
        guard Int(sent.sender) == sender, isDirect == (sent.kind != .broadcast),
            !isDirect || Int(sent.recipient) == receiver
        else {
            misdelivered += 1
            return .misdelivered
        }
        let key = sender * 2 + (isDirect ? 1 : 0)
        let previous = last[receiver][key] ?? 0
        if id == previous {
            duplicates += 1
            return .duplicate
        }
        if id < previous {
            outOfOrder += 1
            return .outOfOrder
        }
        last[receiver][key] = id
        guard sent.delivered < sent.expected else {
            misdelivered += 1
            return .misdelivered
        }
        messages[Int(id) - 1].delivered += 1
        delivered += 1
        return .delivered(kind: sent.kind, latency: now &- sent.time)
    }
}
