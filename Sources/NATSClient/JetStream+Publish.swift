import CNATS
import Foundation

extension JetStream {
    /// The server's acknowledgement of a stored message (libnats' `jsPubAck`).
    public struct PublishAck: Sendable, Equatable {
        /// The stream that stored it.
        public var stream: String
        /// Its sequence number in that stream (1 for the first message).
        public var sequence: UInt64
        /// True when the stream already had a message with this publish's message ID within its
        /// duplicate window: nothing was stored, and ``sequence`` is the original's.
        public var duplicate: Bool

        /// An acknowledgement with these values (for tests and fakes; the server makes the real ones).
        public init(stream: String, sequence: UInt64, duplicate: Bool) {
            self.stream = stream
            self.sequence = sequence
            self.duplicate = duplicate
        }
    }

    /// Publishes `data` to the stream that stores `subject` and waits for it to be stored
    /// (`js_PublishMsg`). Blocks up to `timeout` (default ``timeout``).
    /// - Parameters:
    ///   - messageID: de-duplication ID (header `Nats-Msg-Id`): a second publish with the same ID
    ///     within the stream's duplicate window stores nothing and acknowledges with
    ///     ``PublishAck/duplicate`` true.
    ///   - expectedLastSubjectSequence: compare-and-set: store only if the last message on `subject`
    ///     has this sequence (header `Nats-Expected-Last-Subject-Sequence`); 0 means "only if
    ///     `subject` has no message yet" (libnats' `ExpectNoMessage`).
    /// - Throws: ``NATSError/wrongLastSequence`` when `expectedLastSubjectSequence` does not match;
    ///   ``NATSError/noResponders`` when no stream stores `subject`; ``NATSError/timeout``;
    ///   ``NATSError/jetStream(errorCode:text:)`` for other refusals; ``NATSError/invalid(_:)``.
    public func publish(
        _ subject: String, _ data: Data, headers: [String: String] = [:], messageID: String? = nil,
        expectedLastSubjectSequence: UInt64? = nil, timeout: Duration? = nil
    ) throws(NATSError) -> PublishAck {
        if let messageID, messageID.isEmpty { throw .invalid("the message ID is empty") }
        let message = try OutgoingMessage(subject: subject, data: data, headers: headers)
        let maxWait = try timeout.map { duration throws(NATSError) in try LibNATS.timeout(duration, "timeout") } ?? 0
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(rawValue: 0)
        let status = withOptionalCString(messageID) { messageID in
            var options = jsPubOptions()
            jsPubOptions_Init(&options)
            options.MaxWait = maxWait
            options.MsgId = messageID
            switch expectedLastSubjectSequence {
            case nil: break
            case 0: options.ExpectNoMessage = true
            case let sequence?: options.ExpectLastSubjectSeq = sequence
            }
            return js_PublishMsg(&ack, pointer, message.pointer, &options, &code)
        }
        defer { jsPubAck_Destroy(ack) }
        try LibNATS.check(status, code)
        guard let ack else { throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "js_PublishMsg returned no acknowledgement") }
        return PublishAck(stream: string(ack.pointee.Stream) ?? "", sequence: ack.pointee.Sequence, duplicate: ack.pointee.Duplicate)
    }
}
