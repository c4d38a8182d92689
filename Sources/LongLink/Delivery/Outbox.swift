import Foundation

/// The client's messages that the server has not yet stored, as a pure state machine (no I/O, no
/// clock): ``LongLinkClient`` drives it when reliable delivery is on, and persists every change
/// through its ``DeliveryStateStore``.
///
/// ```
///  acknowledged │ in flight (≤ window)  │ waiting
///  ─────────────┼───────────────────────┼──────────────────
///   #1 #2 (gone)│ #3 #4 #5              │ #6 #7 … (≤ limit in all)
///               └ nextToSend() hands out #6 once #3..#5 number fewer than the window
/// ```
///
/// Messages go out in id order. A connection that ends puts every unacknowledged message back to
/// "waiting" (``rewind()``), so after the next greeting they are resent from the oldest, again at most
/// ``window`` at a time. An acknowledgement (``acknowledge(_:)``) may name any entry, in flight or not.
///
/// When the server asks for a pause (a rate limit), ``slowDown()`` makes the outbox send one message at
/// a time, each after the answer to the one before, until it is empty: a server refusing messages over
/// its rate then refuses one message per pause rather than a whole window of them.
public struct Outbox<Message: Sendable>: Sendable {
    /// One message and what the link needs to resend and report it.
    public struct Entry: Sendable {
        /// The client id the message carries.
        public let id: UInt64
        /// Its wire bytes, frame included.
        public let frame: Data
        /// The message itself (as numbered by the codec), for ``LongLinkClient/Event/stored(id:_:)``.
        public let message: Message
        /// How many times ``Outbox/nextToSend()`` has handed it out (0 for an entry restored from a
        /// store: earlier processes' sends are not counted).
        public fileprivate(set) var sends = 0

        /// An entry for message `id` that has not been sent yet.
        public init(id: UInt64, frame: Data, message: Message) {
            self.id = id
            self.frame = frame
            self.message = message
        }
    }

    /// Why a message cannot join the outbox.
    public enum Refusal: Error, Sendable, Equatable {
        /// The outbox already holds ``Outbox/limit`` messages.
        case full(limit: Int)
    }

    /// The most messages the outbox holds, in flight or waiting. At least 1.
    public let limit: Int
    /// The most messages written on one connection and not yet acknowledged. At least 1.
    public let window: Int
    /// The id the next message gets: 1 for a new client, then one more than the last id given.
    public private(set) var nextID: UInt64
    /// Messages handed out by ``nextToSend()`` more than once (resends), since creation.
    public private(set) var resends = 0
    /// Entries in id order; those before `head` are acknowledged and not yet compacted away.
    private var entries: [Entry]
    private var head = 0
    /// Entries from `head` written on the current connection: always a prefix of the live entries.
    public private(set) var inFlight = 0
    /// The most messages in flight now: ``window``, or 1 from ``slowDown()`` until the outbox is empty.
    public private(set) var currentWindow: Int

    /// An outbox continuing from `nextID` with `entries` (ids ascending, all below `nextID`) waiting.
    /// - Parameters:
    ///   - nextID: the id the next new message gets; at least 1.
    ///   - entries: the messages still waiting for their acknowledgement, ids ascending, all below `nextID`.
    ///   - limit: the most messages held; default 10,000 (issue 11's bound).
    ///   - window: the most unacknowledged messages in flight; default 256 (issue 11's bound).
    public init(nextID: UInt64 = 1, entries: [Entry] = [], limit: Int = 10_000, window: Int = 256) {
        precondition(limit >= 1 && window >= 1, "outbox limit and window must be at least 1")
        precondition(zip(entries, entries.dropFirst()).allSatisfy { $0.id < $1.id }, "outbox entries out of order")
        self.limit = limit
        self.window = window
        currentWindow = window
        self.entries = entries
        self.nextID = max(nextID, (entries.last?.id ?? 0) &+ 1)
    }

    /// Messages held, in flight or waiting.
    public var count: Int { entries.count - head }
    /// True when no message waits for the server.
    public var isEmpty: Bool { count == 0 }
    /// True when ``append(id:frame:message:)`` would fail.
    public var isFull: Bool { count >= limit }
    /// The ids held, ascending.
    public var ids: [UInt64] { entries[head...].map(\.id) }
    /// Messages held and not written on the current connection.
    public var waiting: Int { count - inFlight }

    /// Adds message `id` (normally ``nextID``; never below it) at the end; ``nextID`` moves past it.
    /// - Throws: ``Refusal/full(limit:)`` when the outbox holds ``limit`` messages.
    public mutating func append(id: UInt64, frame: Data, message: Message) throws(Refusal) {
        precondition(id >= nextID, "outbox id \(id) reused (next is \(nextID))")
        guard !isFull else { throw .full(limit: limit) }
        entries.append(Entry(id: id, frame: frame, message: message))
        nextID = id &+ 1
    }

    /// The oldest message not yet written on this connection, now counted in flight; `nil` when all are
    /// written or ``currentWindow`` messages are in flight.
    public mutating func nextToSend() -> Entry? {
        let index = head + inFlight
        guard inFlight < currentWindow, index < entries.count else { return nil }
        if entries[index].sends > 0 { resends += 1 }
        entries[index].sends += 1
        inFlight += 1
        return entries[index]
    }

    /// Removes message `id` (the server stored or refused it) and returns it; `nil` when it is not held
    /// (a second answer for a resent message, say), which changes nothing.
    public mutating func acknowledge(_ id: UInt64) -> Entry? {
        guard let index = index(of: id) else { return nil }
        let entry = entries[index]
        if index < head + inFlight { inFlight -= 1 }
        if index == head {
            head += 1
            compact()
        } else {
            entries.remove(at: index)
        }
        if isEmpty { currentWindow = window }
        return entry
    }

    /// The server asked for a pause: from now until the outbox is empty, one message in flight at a
    /// time (``currentWindow`` 1). Messages already in flight stay counted.
    public mutating func slowDown() { currentWindow = 1 }

    /// The connection ended: nothing is in flight any more; every message held is resent, oldest first,
    /// on the next connection.
    public mutating func rewind() { inFlight = 0 }

    private func index(of id: UInt64) -> Int? {
        var low = head, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].id == id ? low : nil
    }

    /// Drops acknowledged entries from the front once they are the larger part (amortised O(1)).
    private mutating func compact() {
        guard head >= 64, head * 2 >= entries.count else { return }
        entries.removeFirst(head)
        head = 0
    }
}
