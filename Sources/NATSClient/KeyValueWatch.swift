import CNATS
import Foundation
import Glibc
import Synchronization

/// A running watch of a bucket's changes, from ``KeyValueBucket/watchAll(handler:)``.
///
/// The handler runs on a thread of the watch's own, which loops on libnats' `kvWatcher_Next`;
/// one change at a time, in the bucket's order. It ends at ``stop()``, or by itself when the
/// connection closes. Reconnects do not end it: libnats' ordered consumer resumes after the
/// last change delivered.
///
/// Guarantee: once ``stop()`` has returned, the handler is not running and will not run again.
/// Called from inside the handler, ``stop()`` cannot wait for that call; it returns at once and
/// no further call follows.
public final class KeyValueWatch: Sendable {
    private let loop: WatchLoop
    /// The bucket, kept alive while the watch exists.
    private let bucket: KeyValueBucket

    init(watcher: OpaquePointer, bucket: KeyValueBucket, handler: @escaping @Sendable (KeyValueBucket.Change) -> Void) {
        let loop = WatchLoop(watcher: watcher, connection: bucket.jetStream.connection, handler: handler)
        self.loop = loop
        self.bucket = bucket
        let thread = Thread { loop.run() }
        thread.name = "NATSClient KV watch \(bucket.name)"
        thread.start()
    }

    deinit { stop() }

    /// Stops the watch (`kvWatcher_Stop`, which also deletes its consumer: a request that waits up
    /// to the context's timeout) and waits for its thread to finish. Idempotent; never throws.
    public func stop() {
        let onWatchThread = loop.requestStop()
        if !onWatchThread { loop.finished.wait() }
    }
}

/// A watch's loop and the libnats watcher it reads, shared by the watch's thread and its owner;
/// the watcher is destroyed when both are done with it.
///
/// @unchecked Sendable: `watcher` is immutable after init and libnats' watcher calls are
/// thread-safe (`kvWatcher_Stop` may be called while another thread waits in `kvWatcher_Next`);
/// the rest is in a `Mutex` or is Sendable.
final class WatchLoop: @unchecked Sendable {
    private let watcher: OpaquePointer
    /// The connection whose read loop delivers to the watcher's subscription.
    private let connection: NATSConnection
    private let handler: @Sendable (KeyValueBucket.Change) -> Void
    /// Opened when the thread leaves ``run()``.
    let finished = Latch()
    private let state = Mutex(State())

    private struct State {
        var stopRequested = false
        var thread: pthread_t?
    }

    /// How long one `kvWatcher_Next` waits before the loop asks again (a stop wakes it at once).
    private static let nextTimeoutMilliseconds: Int64 = 60_000

    init(watcher: OpaquePointer, connection: NATSConnection, handler: @escaping @Sendable (KeyValueBucket.Change) -> Void) {
        self.watcher = watcher
        self.connection = connection
        self.handler = handler
    }

    deinit {
        // Stopped by KeyValueWatch.stop() already. kvWatcher_Destroy frees the watcher's
        // subscription, which libnats 3.4.1's read loop may have just looked up without a reference
        // (see NATSConnection.close()).
        connection.waitForReadLoop()
        kvWatcher_Destroy(watcher)
    }

    /// The thread's body: the next change, to the handler, until stopped or closed.
    func run() {
        state.withLock { $0.thread = pthread_self() }
        defer {
            finished.open()
            nats_ReleaseThreadMemory()
        }
        while !state.withLock({ $0.stopRequested }) {
            var entry: OpaquePointer?
            let status = kvWatcher_Next(&entry, watcher, WatchLoop.nextTimeoutMilliseconds)
            switch status {
            case NATS_OK:
                let change = entry.map(WatchLoop.change(of:)) ?? .initialValuesDone
                kvEntry_Destroy(entry)
                guard !state.withLock({ $0.stopRequested }) else { return }
                handler(change)
            case NATS_TIMEOUT, NATS_SLOW_CONSUMER, NATS_MISMATCH:
                // Nothing yet; or libnats reporting a hiccup it has already recovered from.
                continue
            default:
                // NATS_ILLEGAL_STATE after kvWatcher_Stop; the subscription's end when the connection closes.
                return
            }
        }
    }

    /// Asks the loop to stop (`kvWatcher_Stop`, once) and tells whether the caller is the loop's
    /// own thread (which must not wait for itself).
    func requestStop() -> Bool {
        let (first, onLoopThread) = state.withLock { state in
            defer { state.stopRequested = true }
            return (!state.stopRequested, state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
        }
        if first { _ = kvWatcher_Stop(watcher) }
        return onLoopThread
    }

    /// The change libnats' entry `entry` reports (the caller frees the entry).
    private static func change(of entry: OpaquePointer) -> KeyValueBucket.Change {
        switch kvEntry_Operation(entry) {
        case kvOp_Delete, kvOp_Purge:
            .delete(key: string(kvEntry_Key(entry)) ?? "", revision: kvEntry_Revision(entry))
        default:
            .put(KeyValueBucket.Entry(copying: entry))
        }
    }
}

extension KeyValueBucket {
    /// Watches every key (`kvStore_WatchAll`: an ordered consumer delivering each key's last
    /// entry, then every change). `handler` gets each key's current value as ``Change/put(_:)``
    /// (deleted keys' markers as ``Change/delete(key:revision:)``), then
    /// ``Change/initialValuesDone`` once, then each put and delete as it happens, on the watch's own
    /// thread (see ``KeyValueWatch``). Values that age out (`maxAge`) produce no change: the server
    /// removes them without a marker.
    ///
    /// Blocks up to the context's ``JetStream/timeout`` while the consumer is created.
    /// - Throws: ``NATSError/timeout``; ``NATSError/notConnected``.
    public func watchAll(handler: @escaping @Sendable (Change) -> Void) throws(NATSError) -> KeyValueWatch {
        var watcher: OpaquePointer?
        try LibNATS.check(kvStore_WatchAll(&watcher, pointer, nil))
        guard let watcher else { throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "kvStore_WatchAll returned no watcher") }
        return KeyValueWatch(watcher: watcher, bucket: self, handler: handler)
    }
}
