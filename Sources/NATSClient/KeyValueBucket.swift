import CNATS
import Foundation

/// A JetStream key-value bucket (libnats' `kvStore`, over the stream `KV_<name>`). Made by
/// ``JetStream/keyValue(bucket:maxAge:history:replicas:)``.
///
/// Keys: letters, digits and `-/_=.` (NATS KV's `[-/_=.a-zA-Z0-9]+`), with no `.` first, last or
/// twice in a row (tokens of a subject); ``encodeKey(_:)`` maps any string to such a key.
/// Revisions are the stream's sequence numbers, shared by all keys of the bucket.
///
/// Every call is a request to the server and blocks up to the context's ``JetStream/timeout``.
/// Sendable: libnats' KV calls are thread-safe and the store pointer is immutable after init.
public final class KeyValueBucket: @unchecked Sendable {
    /// libnats' store, destroyed in deinit.
    let pointer: OpaquePointer
    /// The context it was made with, kept alive while the bucket exists.
    public let jetStream: JetStream
    /// The bucket's name.
    public let name: String

    init(pointer: OpaquePointer, jetStream: JetStream, name: String) {
        self.pointer = pointer
        self.jetStream = jetStream
        self.name = name
    }

    deinit { kvStore_Destroy(pointer) }

    /// The stream behind the bucket (libnats' `kvBucketNameTmpl`, "KV_%s").
    var streamName: String { "KV_\(name)" }

    /// The subject of `key`'s values (libnats' `kvSubjectsPreTmpl`, "$KV.%s."), prefixed by the
    /// context's API prefix when that is not the default, as libnats' kv.c does for writes.
    func writeSubject(_ key: String) -> String {
        let subject = "$KV.\(name).\(key)"
        return jetStream.apiPrefix == JetStream.defaultAPIPrefix ? subject : "\(jetStream.apiPrefix).\(subject)"
    }

    /// The current value of `key` (`kvStore_Get`), or nil when it has none: never put, deleted,
    /// purged, or aged out (``JetStream/keyValue(bucket:maxAge:history:replicas:)``'s `maxAge`).
    /// - Throws: ``NATSError/invalid(_:)`` for a key KV does not allow; ``NATSError/timeout``.
    public func get(_ key: String) throws(NATSError) -> Entry? {
        try KeyValueBucket.validate(key)
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, pointer, key)
        defer { kvEntry_Destroy(entry) }
        if status == NATS_NOT_FOUND { return nil }
        try LibNATS.check(status)
        return entry.map(Entry.init(copying:))
    }

    /// Sets `key` to `value` whatever it was, and returns the new revision.
    /// - Throws: ``NATSError/invalid(_:)`` for a key KV does not allow; ``NATSError/timeout``;
    ///   ``NATSError/jetStream(errorCode:text:)``.
    public func put(_ key: String, _ value: Data) throws(NATSError) -> UInt64 {
        try KeyValueBucket.validate(key)
        return try jetStream.publish(writeSubject(key), value).sequence
    }

    /// Sets `key` to `value` only if it has no value (never put, or deleted or purged last), and
    /// returns the new revision (libnats' `kvStore_Create`, here with JetStream's error codes).
    /// - Throws: ``NATSError/keyExists`` when the key has a value; ``NATSError/invalid(_:)``;
    ///   ``NATSError/timeout``.
    public func create(_ key: String, _ value: Data) throws(NATSError) -> UInt64 {
        try KeyValueBucket.validate(key)
        do throws(NATSError) {
            return try jetStream.publish(writeSubject(key), value, expectedLastSubjectSequence: 0).sequence
        } catch .wrongLastSequence {
            // The key has history: a value (it exists) or a delete or purge marker, which counts as
            // no value; then the write expects that marker as the last revision.
            guard let last = try jetStream.lastMessage(stream: streamName, subject: "$KV.\(name).\(key)"),
                let operation = last.headers[KeyValueBucket.operationHeader],
                operation == "DEL" || operation == "PURGE"
            else { throw .keyExists }
            do throws(NATSError) {
                return try jetStream.publish(writeSubject(key), value, expectedLastSubjectSequence: last.sequence).sequence
            } catch .wrongLastSequence {
                throw .keyExists
            }
        }
    }

    /// Sets `key` to `value` only if its last revision is `lastRevision` (compare-and-set;
    /// libnats' `kvStore_Update`), and returns the new revision.
    /// - Throws: ``NATSError/wrongLastSequence`` when the key changed since `lastRevision` (or was
    ///   deleted); ``NATSError/invalid(_:)`` for revision 0 (use ``create(_:_:)``) or a bad key.
    public func update(_ key: String, _ value: Data, lastRevision: UInt64) throws(NATSError) -> UInt64 {
        try KeyValueBucket.validate(key)
        guard lastRevision > 0 else { throw .invalid("revisions start at 1; create(_:_:) writes a key that has none") }
        return try jetStream.publish(writeSubject(key), value, expectedLastSubjectSequence: lastRevision).sequence
    }

    /// Deletes `key`'s value (`kvStore_Delete`: a delete marker, so watchers see it; earlier
    /// revisions stay in the history until purged). Deleting a missing key succeeds.
    /// - Throws: ``NATSError/invalid(_:)`` for a bad key; ``NATSError/timeout``.
    public func delete(_ key: String) throws(NATSError) {
        try KeyValueBucket.validate(key)
        try LibNATS.check(kvStore_Delete(pointer, key))
    }

    /// The keys that have a value now (`kvStore_Keys`), in no particular order; [] for an empty
    /// bucket. Reads the bucket's last entries through a temporary ordered consumer; blocks up to
    /// the context's ``JetStream/timeout`` in all.
    /// - Throws: ``NATSError/timeout``.
    public func keys() throws(NATSError) -> [String] {
        var options = kvWatchOptions()
        kvWatchOptions_Init(&options)
        options.Timeout = LibNATS.milliseconds(jetStream.timeout)
        var list = kvKeysList()
        let status = kvStore_Keys(&list, pointer, &options)
        defer { kvKeysList_Destroy(&list) }
        try LibNATS.check(status)
        guard let keys = list.Keys else { return [] }
        return (0..<Int(max(list.Count, 0))).compactMap { string(keys[$0]) }
    }

    /// The header of a KV message that tells a delete or purge marker (libnats' `kvOpHeader`).
    static let operationHeader = "KV-Operation"
}
