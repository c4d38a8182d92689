import ChatProtocol
import Foundation
import NATSClient

extension JetStreamMessageStore {
    /// Removes what `policy` says is too many or too old at `now`, conversation by conversation (each
    /// message deleted from the stream, its client id forgotten, then the conversation's first
    /// sequence moved up), and returns how many were removed. A conversation's messages are in the
    /// order they arrived, so the scan of each stops at the first message that stays.
    /// - Throws: ``NATSError``; what was removed before the failure stays removed.
    public func applyRetention(_ policy: RetentionPolicy, now: Date) throws -> Int {
        guard policy != .keepEverything else { return 0 }
        let cutoff = policy.cutoffMilliseconds(now: now)
        var removed = 0
        for key in try heads.keys() {
            guard let conversation = KeyValueBucket.decodeKey(key).flatMap(ConversationID.init) else { continue }
            let bounds = try bounds(of: conversation)
            let tooMany = policy.maxMessagesPerConversation.map { bounds.head - min(bounds.head, UInt64($0)) } ?? 0
            var sequence = bounds.first
            while sequence <= bounds.head {
                if let (message, streamSequence) = try stored(conversation, sequence) {
                    let tooOld = cutoff.map { message.time.millisecondsSince1970 < $0 } ?? false
                    guard sequence <= tooMany || tooOld else { break }
                    try deleteMessage(streamSequence)
                    try ids.delete(Self.idKey(sender: message.sender, instance: message.clientInstance, id: message.clientID))
                    removed += 1
                } else if sequence > tooMany && cutoff == nil {
                    break
                }
                sequence += 1
            }
            if sequence > bounds.first { try moveFirst(of: conversation, to: sequence) }
        }
        return removed
    }

    /// Deletes message `sequence` of the stream (JetStream's `STREAM.MSG.DELETE` API, without erasing).
    private func deleteMessage(_ sequence: UInt64) throws {
        let request = Data(#"{"seq":\#(sequence),"no_erase":true}"#.utf8)
        let reply = try connection.request("$JS.API.STREAM.MSG.DELETE." + streamName, request, timeout: .seconds(5))
        struct Answer: Decodable {
            struct Failure: Decodable { let code: Int; let err_code: Int?; let description: String? }
            let success: Bool?
            let error: Failure?
        }
        let answer = try JSONDecoder().decode(Answer.self, from: reply.data)
        if let error = answer.error {
            throw NATSError.jetStream(errorCode: error.err_code ?? error.code, text: error.description ?? "message delete failed")
        }
    }

    /// Records that the messages of `conversation` below `first` are gone.
    private func moveFirst(of conversation: ConversationID, to first: UInt64) throws {
        let key = Self.key(conversation)
        for _ in 0..<Self.maxAttempts {
            guard let entry = try heads.get(key) else { return }
            var head = try JetStreamRecord.Head.decode(entry.value)
            guard first > head.first else { return }
            head.first = first
            let value = head.encoded()
            if try Self.wrote({ () throws(NATSError) in try heads.update(key, value, lastRevision: entry.revision) }) { return }
        }
        throw NATSError.wrongLastSequence
    }
}
