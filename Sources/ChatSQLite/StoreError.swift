import ChatProtocol

/// Why a store refused a request or could not be opened (the same in every implementation); storage
/// failures themselves are ``SQLiteError``s.
public enum StoreError: Error, Sendable, Equatable {
    /// No user of this name exists.
    case unknownUser(String)
    /// A user of this name exists already.
    case userExists(String)
    /// A direct message whose sender is not one of the conversation's two users.
    case notAMember(sender: String, conversation: ConversationID)
    /// A `.direct` conversation whose names are not sorted (make it with ``ConversationID/init(between:and:)``).
    case invalidConversation(ConversationID)
    /// A value that does not fit the store: an id or sequence above `Int64.max` (SQLite's integers are
    /// signed 64-bit), for example. Names what it is.
    case outOfRange(String)
    /// The file's schema is newer than this program knows (`PRAGMA user_version`).
    case unsupportedSchemaVersion(found: Int32, supported: Int32)
    /// The file is an SQLite database, but not a store of this kind: another application's
    /// (`PRAGMA application_id`), or one with tables of its own. Holds the path.
    case notAStore(path: String)
    /// A value read from the file is not one this program writes (a negative sequence, an unparsable
    /// conversation, a client instance that is not 32 hex digits): the file was changed by something else.
    case corrupt(String)
}

extension StoreError: CustomStringConvertible {
    /// One line for logs and error messages.
    public var description: String {
        switch self {
        case .unknownUser(let name): return "no user named \(name)"
        case .userExists(let name): return "a user named \(name) exists already"
        case .notAMember(let sender, let conversation): return "\(sender) is not one of \(conversation)"
        case .invalidConversation(let conversation): return "conversation \(conversation) has its names unsorted"
        case .outOfRange(let what): return "out of range: \(what)"
        case .unsupportedSchemaVersion(let found, let supported):
            return "the store's schema version is \(found); this program knows up to \(supported)"
        case .notAStore(let path): return "\(path) is an SQLite database, but not a store of this kind"
        case .corrupt(let what): return "corrupt store: \(what)"
        }
    }
}
