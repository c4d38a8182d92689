/// The server's side of reliable delivery to one session, as a pure state machine: per conversation,
/// what the client has acknowledged, what has been sent, and what exists; a cap on deliveries sent and
/// not acknowledged; and "what to fetch next", so that a backlog streams out in bounded pages, each
/// after the client has acknowledged enough of the one before.
///
/// ```
/// conversation "room":  acknowledged 10 │ sent 11…14 (unacknowledged: 4) │ 15…40 exist, not yet sent
///                                                                          └ nextFetch(maxMessages: 8)
///                                                                            = after 14, limit 8 (15…22)
/// ```
///
/// The server uses it like this, on the session's loop:
/// 1. at login, `DeliveryWindow(positions:)` with where the client is (its greeting's positions);
/// 2. whenever a conversation of the user grows (at login: every conversation's head),
///    ``available(conversation:upTo:)``;
/// 3. while ``nextFetch(maxMessages:)`` returns a fetch: read up to `limit` messages after `after` from
///    the store, send them in order, then ``sent(_:)``;
/// 4. on the client's cumulative acknowledgement, ``acknowledge(conversation:upTo:)``, persist
///    ``positions`` if it returned true, and go back to 3.
///
/// Live messages take the same path (2, 3), so they never overtake the backlog and the client sees
/// every conversation in order, without gaps.
public struct DeliveryWindow: Sendable {
    /// A page of one conversation to read from the store and send: the messages numbered
    /// `after + 1` through ``through``.
    public struct Fetch: Sendable, Equatable {
        /// The conversation (text form).
        public var conversation: String
        /// The last sequence already sent; the page starts after it.
        public var after: UInt64
        /// The most messages in the page. At least 1.
        public var limit: Int
        /// The last sequence the page covers: `after + limit` (a negative limit counts as 0; at most
        /// `UInt64.max`).
        public var through: UInt64 {
            let (sum, overflow) = after.addingReportingOverflow(UInt64(max(limit, 0)))
            return overflow ? .max : sum
        }

        /// A page of `limit` messages of `conversation` after sequence `after`.
        public init(conversation: String, after: UInt64, limit: Int) {
            self.conversation = conversation
            self.after = after
            self.limit = limit
        }
    }

    private struct Track: Sendable {
        var acknowledged: UInt64
        var sent: UInt64
        var head: UInt64
    }

    /// The most deliveries sent to the session and not yet acknowledged, over all its conversations.
    /// Default 256 (issue 11's bound). At least 1.
    public let limit: Int
    private var tracks: [String: Track] = [:]
    /// Conversations with messages not yet sent (head above sent), kept as they change so that
    /// ``nextFetch(maxMessages:)``, called for every delivery, does not scan every conversation.
    private var pending: Set<String> = []
    /// The conversation served last, so pages go round the conversations in turn.
    private var lastServed: String?

    /// A window for a client that has everything up to `positions` (absent conversations: nothing).
    /// - Parameters:
    ///   - positions: per conversation, the last sequence the client has; absent conversations start from nothing.
    ///   - limit: the cap on unacknowledged deliveries; default 256.
    public init(positions: DeliveryPositions = [:], limit: Int = 256) {
        precondition(limit >= 1, "delivery window limit must be at least 1")
        self.limit = limit
        for (conversation, position) in positions {
            tracks[conversation] = Track(acknowledged: position, sent: position, head: position)
        }
    }

    /// Deliveries sent and not acknowledged, over all conversations (kept as they change).
    public private(set) var unacknowledged = 0

    /// Per conversation, the highest sequence the client has acknowledged (or started from).
    public var positions: DeliveryPositions { tracks.mapValues(\.acknowledged) }

    /// The highest sequence of `conversation` sent so far (or started from); 0 when unknown.
    public func sentPosition(of conversation: String) -> UInt64 { tracks[conversation]?.sent ?? 0 }

    /// `conversation` now holds messages up to sequence `head` (a head never moves back: a lower value
    /// changes nothing).
    public mutating func available(conversation: String, upTo head: UInt64) {
        var track = tracks[conversation] ?? Track(acknowledged: 0, sent: 0, head: 0)
        track.head = max(track.head, head)
        tracks[conversation] = track
        if track.head > track.sent { pending.insert(conversation) }
    }

    /// The next page to read and send, at most `maxMessages` (default 100) and no more than the window
    /// has room for; `nil` when nothing is left to send or the window is full. Conversations with
    /// something to send take turns, in name order.
    public func nextFetch(maxMessages: Int = 100) -> Fetch? {
        let room = min(maxMessages, limit - unacknowledged)
        guard room > 0 else { return nil }
        guard !pending.isEmpty else { return nil }
        let pending = pending.sorted()
        // The first after the one served last, wrapping round.
        let conversation = lastServed.flatMap { last in pending.first { $0 > last } } ?? pending[0]
        guard let track = tracks[conversation] else { return nil }
        let limit = Int(clamping: min(UInt64(room), track.head - track.sent))
        return Fetch(conversation: conversation, after: track.sent, limit: limit)
    }

    /// The page `fetch` has been sent: every message it covers (through ``Fetch/through``) counts as
    /// sent, including any the store no longer had.
    public mutating func sent(_ fetch: Fetch) {
        guard var track = tracks[fetch.conversation] else { return }
        let sent = max(track.sent, fetch.through)
        unacknowledged += Int(clamping: sent - track.sent)
        track.sent = sent
        track.head = max(track.head, track.sent)
        tracks[fetch.conversation] = track
        if track.head <= track.sent { pending.remove(fetch.conversation) }
        lastServed = fetch.conversation
    }

    /// The client has everything of `conversation` up to `sequence` (cumulative; clamped to what was
    /// sent, never moving back). Returns true when the acknowledged position moved (persist
    /// ``positions``).
    @discardableResult
    public mutating func acknowledge(conversation: String, upTo sequence: UInt64) -> Bool {
        guard var track = tracks[conversation] else { return false }
        let acknowledged = min(max(track.acknowledged, sequence), track.sent)
        guard acknowledged != track.acknowledged else { return false }
        unacknowledged -= Int(clamping: acknowledged - track.acknowledged)
        track.acknowledged = acknowledged
        tracks[conversation] = track
        return true
    }
}
