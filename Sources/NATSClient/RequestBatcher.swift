import CNATS
import Foundation

/// Sends a batch of requests at once on one connection and waits for all their answers: a login's
/// JetStream reads in one round trip instead of one after another (issue 35 §3).
///
/// Every batch shares one inbox subscription (`_INBOX.<unique>.*`, made by ``init(connection:)``);
/// request `n` asks for its answer at `<inbox>.<n>` (`natsConnection_PublishRequest`), and the
/// subscription's libnats delivery thread hands each answer to its batch. A ``NATSConnection/request(_:_:headers:timeout:)``
/// costs its caller's thread a wake-up per request (and libnats' read and delivery threads one
/// each); a batch costs one per batch.
///
/// Sendable: the table of waiting requests is guarded by a lock, each batch by its condition.
public final class RequestBatcher: Sendable {
    /// The requests waiting for an answer, by number; shared with the subscription's handler (which
    /// must not hold the batcher: the subscription holds the handler).
    private final class Table: @unchecked Sendable {
        let lock = NSLock()
        var next: UInt64 = 0
        var waiting: [UInt64: (batch: Batch, index: Int)] = [:]

        /// Hands `message` (answer to request `number`) to its batch; an answer nobody waits for
        /// (its batch timed out) is dropped.
        func answer(_ number: UInt64, _ message: NATSMessage) {
            lock.lock()
            let entry = waiting.removeValue(forKey: number)
            lock.unlock()
            entry?.batch.answer(message, at: entry?.index ?? 0)
        }
    }

    /// One batch's answers, filled in by the delivery thread while its caller waits.
    private final class Batch: @unchecked Sendable {
        let condition = NSCondition()
        var answers: [NATSMessage?]
        var missing: Int

        init(count: Int) {
            answers = Array(repeating: nil, count: count)
            missing = count
        }

        func answer(_ message: NATSMessage, at index: Int) {
            condition.lock()
            if answers[index] == nil {
                answers[index] = message
                missing -= 1
                if missing == 0 { condition.signal() }
            }
            condition.unlock()
        }
    }

    /// The connection the requests go out on.
    public let connection: NATSConnection
    private let inbox: String
    private let table = Table()
    private let subscription: NATSSubscription

    /// Subscribes to a new inbox on `connection` and waits until the server has the subscription
    /// (a flush), so that the first batch's answers are not lost. Blocks up to the connection's
    /// ``NATSConnection/Options/timeout``.
    /// - Throws: ``NATSError/notConnected``; ``NATSError/timeout`` (the flush).
    public init(connection: NATSConnection) throws(NATSError) {
        self.connection = connection
        inbox = "_INBOX." + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let table = table
        subscription = try connection.subscribe(inbox + ".*") { message in
            guard let number = message.subject.split(separator: ".").last.flatMap({ UInt64($0) }) else { return }
            table.answer(number, message)
        }
        try connection.flush()
    }

    /// Publishes every request of `requests` (subject and payload) at once and returns their
    /// answers in the same order, once all have come. Blocks up to `timeout` (default the
    /// connection's ``NATSConnection/Options/timeout``) for the whole batch. An empty batch returns
    /// at once.
    /// - Throws: ``NATSError/noResponders`` when an answer says nobody subscribes to its subject
    ///   (status 503); ``NATSError/timeout`` when an answer has not come by then (a lost
    ///   connection's too); ``NATSError/invalid(_:)`` for an empty subject; ``NATSError/notConnected``.
    public func requests(_ requests: [(subject: String, data: Data)], timeout: Duration? = nil) throws(NATSError) -> [NATSMessage] {
        guard !requests.isEmpty else { return [] }
        if requests.contains(where: { $0.subject.isEmpty }) { throw .invalid("the subject is empty") }
        let milliseconds = try LibNATS.timeout(timeout ?? connection.options.timeout, "timeout")
        let deadline = Date(timeIntervalSinceNow: Double(milliseconds) / 1000)
        let batch = Batch(count: requests.count)
        table.lock.lock()
        let first = table.next
        table.next += UInt64(requests.count)
        for index in requests.indices { table.waiting[first + UInt64(index)] = (batch, index) }
        table.lock.unlock()
        defer {
            table.lock.lock()
            for index in requests.indices { table.waiting[first + UInt64(index)] = nil }
            table.lock.unlock()
        }
        for (index, request) in requests.enumerated() {
            let status = request.data.withUnsafeBytes { bytes in
                natsConnection_PublishRequest(
                    connection.pointer, request.subject, "\(inbox).\(first + UInt64(index))", bytes.baseAddress,
                    Int32(bytes.count))
            }
            try LibNATS.check(status)
        }
        batch.condition.lock()
        while batch.missing > 0 && batch.condition.wait(until: deadline) {}
        let answers = batch.answers
        batch.condition.unlock()
        var messages: [NATSMessage] = []
        messages.reserveCapacity(answers.count)
        for answer in answers {
            guard let answer else { throw .timeout }
            if answer.data.isEmpty, answer.headers[RequestBatcher.statusHeader] == "503" { throw .noResponders }
            messages.append(answer)
        }
        return messages
    }

    /// The header in which libnats puts an answer's status (the `NATS/1.0 404` line's number;
    /// libnats' `STATUS_HDR`), e.g. "404" for JetStream's "no message found" and "503" for no responders.
    public static let statusHeader = "Status"
}
