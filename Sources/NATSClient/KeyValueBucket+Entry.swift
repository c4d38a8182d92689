import CNATS
import Foundation

extension KeyValueBucket {
    /// A key's value at one revision (libnats' `kvEntry`).
    public struct Entry: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The value.
        public var value: Data
        /// The revision that wrote it (its sequence in the bucket's stream).
        public var revision: UInt64
        /// When it was written (the server's clock).
        public var created: Date

        /// An entry with these values (for tests and fakes).
        public init(key: String, value: Data, revision: UInt64, created: Date) {
            self.key = key
            self.value = value
            self.revision = revision
            self.created = created
        }

        /// Copies libnats' entry `entry` (which the caller still owns and frees).
        init(copying entry: OpaquePointer) {
            key = string(kvEntry_Key(entry)) ?? ""
            let count = Int(kvEntry_ValueLen(entry))
            value = count > 0 ? kvEntry_Value(entry).map { Data(bytes: $0, count: count) } ?? Data() : Data()
            revision = kvEntry_Revision(entry)
            created = Date(timeIntervalSince1970: Double(kvEntry_Created(entry)) / 1_000_000_000)
        }
    }

    /// What a watch (``KeyValueBucket/watchAll(handler:)``) reports.
    public enum Change: Sendable, Equatable {
        /// A key got a value: first each key's current value, then every put as it happens.
        case put(Entry)
        /// A key was deleted or purged (a marker written at `revision`).
        case delete(key: String, revision: UInt64)
        /// All values the bucket had when the watch started have been delivered (libnats returns
        /// a NULL entry from `kvWatcher_Next` once); what follows happened after. Comes once, also
        /// for an empty bucket.
        case initialValuesDone
    }
}
