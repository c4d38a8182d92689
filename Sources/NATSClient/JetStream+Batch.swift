import Foundation

extension JetStream {
    /// The request that reads the last message of `stream` on `subject` (wildcards allowed), for a
    /// ``RequestBatcher`` batch: `$JS.API.STREAM.MSG.GET.<stream>` with `{"last_by_subj": subject}`,
    /// the request `js_GetLastMsg` makes. Its answer goes to ``lastMessageSubject(from:)``.
    /// - Throws: ``NATSError/invalid(_:)`` for an empty stream or subject.
    public func lastMessageRequest(stream: String, subject: String) throws(NATSError) -> (subject: String, data: Data) {
        guard !stream.isEmpty else { throw .invalid("the stream name is empty") }
        guard !subject.isEmpty else { throw .invalid("the subject is empty") }
        guard let body = try? JSONEncoder().encode(["last_by_subj": subject]) else { throw .invalid("subject \(subject)") }
        return (subject: "\(apiPrefix).STREAM.MSG.GET.\(stream)", data: body)
    }

    /// The subject and stream sequence of the message in the answer to a ``lastMessageRequest(stream:subject:)``
    /// (what ``lastMessage(stream:subject:)`` gives of it), or nil when there is none (JetStream
    /// error 10037, "no message found").
    /// - Throws: ``NATSError/jetStream(errorCode:text:)`` for another error answer;
    ///   ``NATSError/status(code:text:)`` for an answer that is not the API's.
    public static func lastMessageSubject(from answer: NATSMessage) throws(NATSError) -> (subject: String, sequence: UInt64)? {
        guard let response = try? answerDecoder.decode(MessageGetResponse.self, from: answer.data) else {
            throw .status(code: -1, text: "not an answer of STREAM.MSG.GET: \(String(decoding: answer.data.prefix(200), as: UTF8.self))")
        }
        if let error = response.error {
            if error.err_code == LibNATS.noMessageFound { return nil }
            throw .jetStream(errorCode: error.err_code ?? error.code, text: error.description ?? "JetStream error")
        }
        guard let message = response.message else { throw .status(code: -1, text: "STREAM.MSG.GET answered no message") }
        return (message.subject, message.seq)
    }

    /// The acknowledgement in the answer to a publish sent through a ``RequestBatcher`` batch (such
    /// as ``KeyValueBucket/putRequest(for:_:)``): JetStream's `{"stream": …, "seq": …}`, as
    /// ``publish(_:_:headers:messageID:expectedLastSubjectSequence:timeout:)`` returns it.
    /// - Throws: ``NATSError/jetStream(errorCode:text:)`` for an error answer;
    ///   ``NATSError/status(code:text:)`` for an answer that is not an acknowledgement.
    public static func publishAck(from answer: NATSMessage) throws(NATSError) -> PublishAck {
        struct Answer: Decodable {
            let stream: String?
            let seq: UInt64?
            let duplicate: Bool?
            let error: APIError?
        }
        guard let ack = try? answerDecoder.decode(Answer.self, from: answer.data) else {
            throw .status(code: -1, text: "not a publish acknowledgement: \(String(decoding: answer.data.prefix(200), as: UTF8.self))")
        }
        if let error = ack.error {
            throw .jetStream(errorCode: error.err_code ?? error.code, text: error.description ?? "JetStream error")
        }
        guard let stream = ack.stream, let sequence = ack.seq else {
            throw .status(code: -1, text: "an acknowledgement without its stream or sequence")
        }
        return PublishAck(stream: stream, sequence: sequence, duplicate: ack.duplicate ?? false)
    }

    /// The decoder of the API's answers, made once (`JSONDecoder` is thread-safe).
    private static let answerDecoder = JSONDecoder()

    /// A JetStream API error answer (`{"error": {"code": 404, "err_code": 10037, …}}`).
    struct APIError: Decodable {
        let code: Int
        let err_code: Int?
        let description: String?
    }

    /// The JetStream API's answer to `STREAM.MSG.GET` (the fields read here; the payload and headers,
    /// base64, are not).
    private struct MessageGetResponse: Decodable {
        struct Message: Decodable {
            let subject: String
            let seq: UInt64
        }
        let message: Message?
        let error: APIError?
    }
}
