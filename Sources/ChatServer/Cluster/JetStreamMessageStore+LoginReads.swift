import ChatProtocol
import Foundation
import NATSClient

extension JetStreamMessageStore {
    /// Each conversation's head (its head record and its stream's last message, as ``bounds(of:)``),
    /// `user`'s position unless `known`, and the other user's position: every read of every
    /// conversation in one batch (``RequestBatcher``), one round trip where one after another took
    /// two to four per conversation (issue 35 §3: a stored login's window). Buckets that do not allow
    /// direct gets (made by an older client) are read one after another.
    public func conversationStarts(
        of user: String, in conversations: [ConversationID], known: [String: UInt64]
    ) throws -> [ConversationStart] {
        var requests: [(subject: String, data: Data)] = []
        var reads: [Read] = []
        let userKey = Self.key(user)  // NFC and encoding once, not per conversation
        for conversation in conversations {
            let key = Self.key(conversation)
            var read = Read(head: requests.count)
            requests.append(try heads.getRequest(for: key))
            requests.append(try jetStream.lastMessageRequest(stream: streamName, subject: "\(prefix).msg.\(key).*"))
            if known[conversation.description] == nil {
                read.position = requests.count
                requests.append(try positions.getRequest(for: userKey + "." + key))
            }
            if let other = conversation.otherUser(than: user) {
                read.otherPosition = requests.count
                requests.append(try positions.getRequest(for: Self.key(other) + "." + key))
            }
            reads.append(read)
        }
        let answers: [NATSMessage]
        do {
            answers = try batcher.requests(requests, timeout: jetStream.timeout)
        } catch NATSError.noResponders {
            return try conversationStartsOneByOne(of: user, in: conversations, known: known)
        }
        return try zip(conversations, reads).map { conversation, read in
            var head: UInt64 = 0
            if let entry = try KeyValueBucket.entry(of: "", from: answers[read.head]) {
                head = try JetStreamRecord.Head.decode(entry.value).head
            }
            if let last = try JetStream.lastMessageSubject(from: answers[read.head + 1]), let (_, sequence) = parse(last.subject) {
                head = max(head, sequence)
            }
            let position = try read.position.map { try Self.position(from: answers[$0]) } ?? known[conversation.description] ?? 0
            let other = read.otherPosition.flatMap { try? Self.position(from: answers[$0]) }
            return ConversationStart(head: head, position: position, otherPosition: other)
        }
    }

    /// Where one conversation's answers are in the batch.
    private struct Read {
        var head: Int
        var position: Int?
        var otherPosition: Int?
    }

    /// A position from its key's direct-get answer (0 when none), as ``position(of:in:)`` reads it.
    private static func position(from answer: NATSMessage) throws -> UInt64 {
        guard let entry = try KeyValueBucket.entry(of: "", from: answer) else { return 0 }
        return UInt64(String(decoding: entry.value, as: UTF8.self)) ?? 0
    }
}
