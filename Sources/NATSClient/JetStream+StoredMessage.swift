import CNATS
import Foundation

extension JetStream {
    /// A message as a stream stored it: read back by ``JetStream/message(stream:sequence:)`` and
    /// ``JetStream/lastMessage(stream:subject:)``, or delivered by
    /// ``JetStream/subscribeNew(filter:handler:)``.
    public struct StoredMessage: Sendable, Equatable {
        /// The subject it was published on.
        public var subject: String
        /// Its sequence number in the stream.
        public var sequence: UInt64
        /// The payload.
        public var data: Data
        /// Its headers, the first value of each name (as published, plus JetStream's own, such as
        /// `Nats-Msg-Id`).
        public var headers: [String: String]
        /// When the stream stored it (the server's clock, nanoseconds since 1970 on the wire).
        public var time: Date

        /// A stored message with these values (for tests and fakes).
        public init(subject: String, sequence: UInt64, data: Data, headers: [String: String], time: Date) {
            self.subject = subject
            self.sequence = sequence
            self.data = data
            self.headers = headers
            self.time = time
        }

        /// Copies libnats' message `message` with the sequence and time given.
        init(copying message: OpaquePointer, sequence: UInt64, nanosecondsSince1970: Int64) {
            subject = string(natsMsg_GetSubject(message)) ?? ""
            self.sequence = sequence
            data = NATSMessage.data(of: message)
            headers = NATSMessage.headers(of: message)
            time = Date(timeIntervalSince1970: Double(nanosecondsSince1970) / 1_000_000_000)
        }
    }

    /// The message at `sequence` in `stream` (`js_GetMsg`), or nil when there is none (never
    /// stored, deleted, or aged out: JetStream error 10037). Blocks up to ``timeout``.
    /// - Throws: ``NATSError/jetStream(errorCode:text:)`` (10059 when the stream does not exist);
    ///   ``NATSError/timeout``; ``NATSError/invalid(_:)`` for an empty name or sequence 0.
    public func message(stream: String, sequence: UInt64) throws(NATSError) -> StoredMessage? {
        guard !stream.isEmpty else { throw .invalid("the stream name is empty") }
        guard sequence > 0 else { throw .invalid("stream sequences start at 1") }
        var message: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetMsg(&message, pointer, stream, sequence, nil, &code)
        return try stored(message, status, code)
    }

    /// The last message on `subject` in `stream` (`js_GetLastMsg`), or nil when the subject has
    /// none (JetStream error 10037). Blocks up to ``timeout``.
    /// - Throws: as ``message(stream:sequence:)``.
    public func lastMessage(stream: String, subject: String) throws(NATSError) -> StoredMessage? {
        guard !stream.isEmpty else { throw .invalid("the stream name is empty") }
        guard !subject.isEmpty else { throw .invalid("the subject is empty") }
        var message: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetLastMsg(&message, pointer, stream, subject, nil, &code)
        return try stored(message, status, code)
    }

    /// The stored message of a `js_GetMsg`-style call, freeing libnats' message; nil for "not found".
    private func stored(_ message: OpaquePointer?, _ status: natsStatus, _ code: jsErrCode) throws(NATSError) -> StoredMessage? {
        defer { natsMsg_Destroy(message) }
        if status == NATS_NOT_FOUND || Int(code.rawValue) == LibNATS.noMessageFound { return nil }
        try LibNATS.check(status, code)
        guard let message else { return nil }
        return StoredMessage(copying: message, sequence: natsMsg_GetSequence(message), nanosecondsSince1970: natsMsg_GetTime(message))
    }
}
