import AsyncSocket
import Foundation
import SocketFraming

/// The reliable-delivery half of a ``LongLinkClient``: its ``Outbox``, its ``ReceiveTracker`` and its
/// ``DeliveryStateStore``, with the codec's numbering functions. The link's state machine calls it on
/// the event loop (loop-confined state); the calls that reach the store (``prepare(_:id:outboxFull:)``,
/// ``persist(through:)``) run on the link's store queue.
final class ReliableDelivery<Message: Sendable>: @unchecked Sendable {
    /// A ``ReliableLinkCodec``'s methods, captured where the codec's type is known.
    struct Operations: Sendable {
        let number: @Sendable (Message, UInt64) -> Message
        let id: @Sendable (Message) -> UInt64?
        let role: @Sendable (Message) -> DeliveryRole
        let acknowledgement: @Sendable (String, UInt64) -> Message
        let encode: @Sendable (Message) throws -> Data
    }

    /// The outcome of offering a message to the outbox.
    enum Admission {
        /// The codec does not number it: send it as a plain link does.
        case unnumbered
        /// Persisted with this id as `frame`: `message` (numbered) joins the outbox.
        case admitted(id: UInt64, frame: Data, message: Message)
        /// The outbox is at its limit.
        case outboxFull
        /// The codec could not encode it.
        case encodingFailed(String)
        /// The store could not persist it.
        case storeFailed(String)
    }

    /// What an arriving message means.
    enum Incoming {
        /// Not about delivery: pass it on.
        case other
        /// The server stored outbox message `id`.
        case stored(id: UInt64, Message)
        /// The server refused outbox message `id` (`nil`: not in the outbox); pass the answer on too.
        case refused(id: UInt64, Message?)
        /// The server will take the outbox's messages after `after`: pause, then resend; pass the answer on.
        case retry(after: Duration)
        /// A delivery to pass on.
        case deliver
        /// A delivery to drop: a duplicate, or an answer for a message no longer in the outbox.
        case drop
        /// A delivery that came early: `expected` was due in `conversation`, `received` came.
        case gap(conversation: String, expected: UInt64, received: UInt64)
    }

    let operations: Operations
    let store: any DeliveryStateStore
    /// The app's greeting builder (any thread may set it).
    let greetingBuilder = LockedValue<(@Sendable (DeliveryPositions) -> Message)?>(nil)

    // Loop-confined.
    private(set) var outbox: Outbox<Message>
    private(set) var tracker: ReceiveTracker
    private var pendingRemovals: [UInt64] = []
    /// True while a flush is queued on the loop for the current pass.
    var flushScheduled = false
    private(set) var storeFailures = 0
    /// Answers that asked for a pause (``DeliveryRole/retry(id:after:)``).
    private(set) var pauses = 0
    private(set) var lastStoreError: String?

    /// A driver continuing from `state` (loaded from `store`); outbox entries are taken in id order, a
    /// repeated id once.
    /// - Throws: ``DeliveryStoreError/undecodableEntry(id:reason:)`` when an outbox entry's frame does
    ///   not decode to a message numbered with its id.
    init<Codec: ReliableLinkCodec>(
        codec: Codec, store: any DeliveryStateStore, state: DeliveryState, limit: Int, window: Int
    ) throws(DeliveryStoreError) where Codec.Message == Message {
        operations = Operations(
            number: { codec.message($0, numbered: $1) },
            id: { codec.id(of: $0) },
            role: { codec.role(of: $0) },
            acknowledgement: { codec.acknowledgement(conversation: $0, upTo: $1) },
            encode: { try codec.encode($0) })
        self.store = store
        var entries: [Outbox<Message>.Entry] = []
        for stored in state.outbox.sorted(by: { $0.id < $1.id }) where stored.id != entries.last?.id {
            let message = try Self.decode(stored, with: codec)
            entries.append(.init(id: stored.id, frame: stored.frame, message: message))
        }
        outbox = Outbox(nextID: state.nextID, entries: entries, limit: max(limit, 1), window: max(window, 1))
        tracker = ReceiveTracker(positions: state.positions)
    }

    /// The message in a persisted entry: its frame decoded with a fresh decoder, checked to carry its id.
    private static func decode<Codec: ReliableLinkCodec>(
        _ entry: OutboxEntry, with codec: Codec
    ) throws(DeliveryStoreError) -> Message where Codec.Message == Message {
        var decoder = codec.makeDecoder()
        var buffer = FrameBuffer()
        buffer.append(entry.frame)
        let message: Message
        do {
            guard let frame = try decoder.decode(&buffer), buffer.readableBytes == 0 else {
                throw DeliveryStoreError.undecodableEntry(id: entry.id, reason: "not exactly one whole frame")
            }
            message = try codec.message(from: frame)
        } catch let error as DeliveryStoreError {
            throw error
        } catch {
            throw .undecodableEntry(id: entry.id, reason: "\(error)")
        }
        guard codec.id(of: message) == entry.id else {
            throw .undecodableEntry(id: entry.id, reason: "carries id \(codec.id(of: message).map(String.init) ?? "none")")
        }
        return message
    }

    // MARK: Sending

    /// The id the next numbered message gets, and whether the outbox is at its limit. Loop only.
    var nextAdmission: (id: UInt64, isFull: Bool) { (outbox.nextID, outbox.isFull) }

    /// Numbers `message` with `id`, encodes it and persists it (``DeliveryStateStore/enqueue(id:frame:)``),
    /// unless the codec does not number it or the outbox is full (`outboxFull`). Off the loop, on the
    /// link's store queue; `id` and `outboxFull` come from ``nextAdmission``, and ``append(id:frame:message:)``
    /// follows on the loop.
    func prepare(_ message: Message, id: UInt64, outboxFull: Bool) -> Admission {
        let numbered = operations.number(message, id)
        guard operations.id(numbered) == id else { return .unnumbered }
        guard !outboxFull else { return .outboxFull }
        let frame: Data
        do {
            frame = try operations.encode(numbered)
        } catch {
            return .encodingFailed("\(error)")
        }
        do {
            try store.enqueue(id: id, frame: frame)
        } catch {
            return .storeFailed("\(error)")
        }
        return .admitted(id: id, frame: frame, message: numbered)
    }

    /// Queues a message ``prepare(_:id:outboxFull:)`` persisted. Loop only.
    func append(id: UInt64, frame: Data, message: Message) {
        try? outbox.append(id: id, frame: frame, message: message)  // checked by prepare; kept for the typed throw
    }

    /// The greeting for a new connection, built from the positions; `nil` without a builder.
    func greeting() -> Message? {
        greetingBuilder.withLock { $0 }.map { $0(tracker.positions) }
    }

    /// The next outbox frame the window lets out on this connection.
    func nextFrame() -> Data? { outbox.nextToSend()?.frame }

    /// The connection ended: everything unacknowledged is resent on the next one.
    func connectionEnded() {
        outbox.rewind()
        tracker.connectionEnded()
    }

    /// After a ``DeliveryRole/retry(id:after:)`` pause: every unanswered message is sent again, from the
    /// oldest, on this connection, one at a time (``Outbox/slowDown()``) until the outbox is empty.
    func resendUnanswered() {
        outbox.rewind()
    }

    // MARK: Receiving

    /// What `message` means; updates the outbox and the positions. Removals and positions reach the
    /// store at the next ``persist(through:)``.
    func classify(_ message: Message) -> Incoming {
        switch operations.role(message) {
        case .other:
            return .other
        case .stored(let id):
            guard let entry = outbox.acknowledge(id) else { return .drop }
            pendingRemovals.append(id)
            return .stored(id: id, entry.message)
        case .refused(let id):
            guard let entry = outbox.acknowledge(id) else { return .refused(id: id, nil) }
            pendingRemovals.append(id)
            return .refused(id: id, entry.message)
        case .retry(_, let after):
            pauses += 1
            outbox.slowDown()
            return .retry(after: after)
        case .delivery(let conversation, let sequence):
            switch tracker.receive(conversation: conversation, sequence: sequence) {
            case .deliver: return .deliver
            case .duplicate: return .drop
            case .gap(let expected): return .gap(conversation: conversation, expected: expected, received: sequence)
            }
        }
    }

    /// True when a ``takeFlush()`` would take something.
    var needsFlush: Bool { !pendingRemovals.isEmpty || tracker.owesAcknowledgements }

    /// What one flush writes: outbox removals, changed positions, acknowledgements owed.
    struct Flush: Sendable {
        var removals: [UInt64]
        var positions: DeliveryPositions
        var acknowledgements: [(conversation: String, sequence: UInt64)]
    }

    /// What ``persist(through:)`` did: the acknowledgements now allowed, and the store's errors.
    struct Persisted: Sendable {
        var acknowledgements: [Message]
        var failures: [String]
    }

    /// Flushes taken on the loop and not yet given to the store, oldest first, each with its number.
    private let unwritten = LockedValue<[(number: UInt64, flush: Flush)]>([])
    /// The number of the last flush taken; with ``persist(through:)``, everything taken so far.
    /// Loop-confined.
    private(set) var flushesTaken: UInt64 = 0

    /// Takes what is owed to the store and the server now and queues it for ``persist(through:)``;
    /// returns its number. Loop only.
    func takeFlush() -> UInt64 {
        flushScheduled = false
        defer { pendingRemovals.removeAll() }
        let flush = Flush(
            removals: pendingRemovals, positions: tracker.takeChangedPositions(), acknowledgements: tracker.takeAcknowledgements())
        flushesTaken += 1
        let number = flushesTaken
        unwritten.withLock { $0.append((number, flush)) }
        return number
    }

    /// Brings the store up to date with every flush taken up to number `last` (removals, then
    /// positions, oldest first) and returns their acknowledgements, one per conversation. On the link's
    /// store queue: right after the events the flushes cover have reached the app, so a position is
    /// saved as soon as the app has handled its delivery; and at a drain's end or a stop. The queue is
    /// serial: one write at a time, in the order the flushes were taken. A store failure is returned for
    /// the loop to count; the state in memory goes on.
    func persist(through last: UInt64) -> Persisted {
        let flushes = unwritten.withLock { queued in
            let count = queued.prefix { $0.number <= last }.count
            defer { queued.removeFirst(count) }
            return queued.prefix(count).map(\.flush)
        }
        var failures: [String] = []
        var acknowledged: [String: UInt64] = [:]
        for flush in flushes {
            if !flush.removals.isEmpty {
                do { try store.remove(ids: flush.removals) } catch { failures.append("\(error)") }
            }
            if !flush.positions.isEmpty {
                do { try store.setPositions(flush.positions) } catch { failures.append("\(error)") }
            }
            for (conversation, sequence) in flush.acknowledgements { acknowledged[conversation] = sequence }
        }
        let acknowledgements = acknowledged.sorted { $0.key < $1.key }.map { operations.acknowledgement($0.key, $0.value) }
        return Persisted(acknowledgements: acknowledgements, failures: failures)
    }

    /// Counts the store failures ``persist(through:)`` returned. Loop only.
    func noteStoreFailures(_ failures: [String]) {
        guard let last = failures.last else { return }
        storeFailures += failures.count
        lastStoreError = last
    }
}

/// A ``DeliveryStateStore``'s content that a reliable ``LongLinkClient`` cannot use.
public enum DeliveryStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The outbox entry `id` does not decode, with the link's codec, to one message numbered `id`
    /// (written by another protocol version, or damaged); `reason` says what went wrong.
    case undecodableEntry(id: UInt64, reason: String)

    public var description: String {
        switch self {
        case .undecodableEntry(let id, let reason): return "outbox entry #\(id) cannot be decoded: \(reason)"
        }
    }
}
