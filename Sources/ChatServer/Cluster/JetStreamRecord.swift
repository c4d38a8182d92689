import ChatProtocol
import ChatSQLite
import Foundation

/// The records ``JetStreamMessageStore`` keeps in JetStream, as JSON (short keys: they are stored with
/// every message) or plain text.
enum JetStreamRecord {
    /// A stored message, without its conversation and sequence (they are in its subject).
    struct Message: Codable {
        /// Sender, text, time (milliseconds since 1970, UTC), client instance, client id.
        var s: String, t: String, ms: Int64, i: String, id: UInt64
        /// The node that stored it (``JetStreamMessageStore/origin``), if any.
        var o: String?

        init(_ message: NewMessage, origin: String?) {
            o = origin
            s = message.sender
            t = message.text
            ms = message.time.millisecondsSince1970
            i = message.clientInstance
            id = message.clientID
        }

        func stored(in conversation: ConversationID, sequence: UInt64) -> StoredMessage {
            StoredMessage(
                conversation: conversation, sequence: sequence, sender: s, text: t,
                time: Date(millisecondsSince1970: ms), clientInstance: i, clientID: id)
        }

        func encoded() throws -> Data { try JSONEncoder().encode(self) }

        /// - Throws: ``StoreError/corrupt(_:)`` for anything but a message record.
        static func decode(_ data: Data) throws -> Message {
            do { return try JSONDecoder().decode(Message.self, from: data) } catch {
                throw StoreError.corrupt("a message record: \(error)")
            }
        }
    }

    /// A user (``UserRecord``).
    struct User: Codable {
        var name: String, passwordHash: String?, roomStart: UInt64, createdMilliseconds: Int64

        init(_ record: UserRecord) {
            name = record.name
            passwordHash = record.passwordHash
            roomStart = record.roomStart
            createdMilliseconds = record.created.millisecondsSince1970
        }

        var record: UserRecord {
            UserRecord(
                name: name, passwordHash: passwordHash, roomStart: roomStart, created: Date(millisecondsSince1970: createdMilliseconds))
        }

        func encoded() throws -> Data { try JSONEncoder().encode(self) }

        /// - Throws: ``StoreError/corrupt(_:)`` for anything but a user record.
        static func decode(_ data: Data) throws -> User {
            do { return try JSONDecoder().decode(User.self, from: data) } catch { throw StoreError.corrupt("a user record: \(error)") }
        }
    }

    /// A conversation's last sequence ever given and its first not removed by retention: `HEAD FIRST`.
    struct Head: Equatable {
        var head: UInt64, first: UInt64

        func encoded() -> Data { Data("\(head) \(first)".utf8) }

        /// - Throws: ``StoreError/corrupt(_:)`` for anything but two numbers.
        static func decode(_ data: Data) throws -> Head {
            let parts = String(decoding: data, as: UTF8.self).split(separator: " ")
            guard parts.count == 2, let head = UInt64(parts[0]), let first = UInt64(parts[1]) else {
                throw StoreError.corrupt("a conversation head: \(String(decoding: data, as: UTF8.self))")
            }
            return Head(head: head, first: first)
        }
    }
}
