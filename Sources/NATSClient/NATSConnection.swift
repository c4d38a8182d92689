import CNATS
import Foundation
import Glibc

/// A connection to a NATS server (libnats' `natsConnection`), reconnecting by itself after losses.
///
/// Calls block the calling thread until libnats is done: run them off event loops and the
/// cooperative pool's hot paths. Publishes only buffer (libnats' flusher thread writes them);
/// requests, flushes and JetStream calls wait for the server up to their timeout.
///
/// Sendable: libnats' connection calls are thread-safe, and the pointer is immutable after init.
/// ``close()`` is idempotent; releasing the last reference closes and destroys the connection.
/// Subscriptions, JetStream contexts and KV buckets hold their connection, so it lives as long as
/// they do; the `events` handler must not hold the connection strongly (or ``close()`` it to break
/// the cycle).
///
/// libnats opens its socket without close-on-exec (Debian's libnats has no option for it): a process
/// that starts children while connected should close descriptors above 2 in them
/// (`posix_spawn_file_actions_addclosefrom_np`), or the child holds the connection open.
public final class NATSConnection: @unchecked Sendable {
    /// libnats' connection, destroyed in deinit.
    let pointer: OpaquePointer
    /// What it was connected with.
    public let options: Options

    private init(pointer: OpaquePointer, options: Options) {
        self.pointer = pointer
        self.options = options
    }

    /// Connects to the first server of `options.servers` that answers.
    ///
    /// Blocks up to `options.timeout` per server (longer with several). With
    /// ``Options/retryOnFailedConnect`` it returns at once when none answers and keeps trying.
    /// - Parameter events: called with each ``Event`` on libnats' callback thread; see ``Event``.
    /// - Throws: ``NATSError/invalid(_:)`` for an empty server list or a bad URL or duration;
    ///   ``NATSError/status(code:text:)`` (`NATS_NO_SERVER`, "No server available") when no server
    ///   answers; ``NATSError/timeout``.
    public static func connect(
        _ options: Options, events: @escaping @Sendable (Event) -> Void = { _ in }
    ) throws(NATSError) -> NATSConnection {
        guard cnats_check_compatibility() else {
            throw .status(
                code: Int32(bitPattern: NATS_ERR.rawValue),
                text: "the libnats loaded (\(string(nats_GetVersion()) ?? "?")) does not match its headers (\(NATS_VERSION_STRING))")
        }
        guard !options.servers.isEmpty else { throw .invalid("no server URL") }
        try LibNATS.check(LibNATS.opened)
        guard options.reconnectWait >= .zero else { throw .invalid("reconnectWait must not be negative") }
        guard options.maxReconnects >= -1, options.maxReconnects <= Int(Int32.max) else {
            throw .invalid("maxReconnects must be -1 (forever) or a count, not \(options.maxReconnects)")
        }
        let timeout = try LibNATS.timeout(options.timeout, "timeout")

        var natsOptions: OpaquePointer?
        try LibNATS.check(natsOptions_Create(&natsOptions))
        guard let natsOptions else {
            throw .status(code: Int32(bitPattern: NATS_NO_MEMORY.rawValue), text: "natsOptions_Create returned nothing")
        }
        defer { natsOptions_Destroy(natsOptions) }
        try LibNATS.check(withCStringArray(options.servers) { natsOptions_SetServers(natsOptions, $0, $1) })
        try LibNATS.check(natsOptions_SetNoRandomize(natsOptions, true))
        if !options.name.isEmpty { try LibNATS.check(natsOptions_SetName(natsOptions, options.name)) }
        try LibNATS.check(natsOptions_SetTimeout(natsOptions, timeout))
        try LibNATS.check(natsOptions_SetAllowReconnect(natsOptions, true))
        try LibNATS.check(natsOptions_SetReconnectWait(natsOptions, LibNATS.milliseconds(options.reconnectWait)))
        try LibNATS.check(natsOptions_SetMaxReconnect(natsOptions, Int32(options.maxReconnects)))

        // From here on the sink's reference belongs to libnats once a connection exists.
        let closure = EventSink(events).retainedPointer()
        var connection: OpaquePointer?
        var status = natsOptions_SetDisconnectedCB(natsOptions, EventSink.disconnected, closure)
        if status == NATS_OK { status = natsOptions_SetReconnectedCB(natsOptions, EventSink.reconnected, closure) }
        if status == NATS_OK { status = natsOptions_SetClosedCB(natsOptions, EventSink.closed, closure) }
        if status == NATS_OK {
            status = natsOptions_SetRetryOnFailedConnect(
                natsOptions, options.retryOnFailedConnect, options.retryOnFailedConnect ? EventSink.connected : nil, closure)
        }
        if status == NATS_OK { status = natsConnection_Connect(&connection, natsOptions) }
        guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED, let connection else {
            let error = status == NATS_OK ? NATSError.notConnected : LibNATS.error(status)
            EventSink.release(closure)
            throw error
        }
        return NATSConnection(pointer: connection, options: options)
    }

    deinit {
        close()
        natsConnection_Destroy(pointer)
    }

    /// Whether libnats' state is connected (`natsConnection_Status` is `NATS_CONN_STATUS_CONNECTED`):
    /// false while connecting, reconnecting, draining or closed. Does not block.
    public var isConnected: Bool { natsConnection_Status(pointer) == NATS_CONN_STATUS_CONNECTED }

    /// Whether the connection is closed for good (``close()``, or reconnects exhausted). Does not block.
    public var isClosed: Bool { natsConnection_IsClosed(pointer) }

    /// The error that last broke the connection (`natsConnection_GetLastError`), e.g. why it
    /// closed by itself; nil when there is none. Does not block.
    public var lastError: NATSError? {
        var text: UnsafePointer<CChar>?
        let status = natsConnection_GetLastError(pointer, &text)
        guard status != NATS_OK else { return nil }
        let error = LibNATS.error(status)
        guard case .status(let code, _) = error, let words = string(text), !words.isEmpty else { return error }
        return .status(code: code, text: words)
    }

    /// Publishes `data` with `headers` on `subject` (`natsConnection_PublishMsg`).
    ///
    /// Does not block on the server: libnats buffers the message and its flusher thread sends it
    /// soon; while disconnected it goes to the reconnect buffer (8 MB, libnats' default). Call
    /// ``flush(timeout:)`` to wait until the server has everything published so far.
    /// - Throws: ``NATSError/invalid(_:)`` for an empty subject or a bad header;
    ///   ``NATSError/notConnected`` when closed; ``NATSError/status(code:text:)`` otherwise
    ///   (e.g. `NATS_MAX_PAYLOAD` for a payload over the server's limit, 1 MB by default).
    public func publish(_ subject: String, _ data: Data, headers: [String: String] = [:]) throws(NATSError) {
        let message = try OutgoingMessage(subject: subject, data: data, headers: headers)
        try LibNATS.check(natsConnection_PublishMsg(pointer, message.pointer))
    }

    /// Publishes a request on `subject` with a fresh reply inbox and waits for the first answer
    /// (`natsConnection_RequestMsg`). Blocks up to `timeout` (default ``Options/timeout``).
    /// - Throws: ``NATSError/noResponders`` when nobody subscribes to `subject` (the server says so
    ///   at once); ``NATSError/timeout``; ``NATSError/notConnected``; ``NATSError/invalid(_:)``.
    public func request(
        _ subject: String, _ data: Data, headers: [String: String] = [:], timeout: Duration? = nil
    ) throws(NATSError) -> NATSMessage {
        let milliseconds = try LibNATS.timeout(timeout ?? options.timeout, "timeout")
        let message = try OutgoingMessage(subject: subject, data: data, headers: headers)
        var reply: OpaquePointer?
        try LibNATS.check(natsConnection_RequestMsg(&reply, pointer, message.pointer, milliseconds))
        guard let reply else {
            throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "natsConnection_RequestMsg returned no reply")
        }
        defer { natsMsg_Destroy(reply) }
        return NATSMessage(copying: reply)
    }

    /// Sends what is buffered and waits until the server has answered a PING sent after it
    /// (`natsConnection_FlushTimeout`): everything published before the call has reached the server.
    /// Blocks up to `timeout` (default ``Options/timeout``).
    /// - Throws: ``NATSError/timeout``; ``NATSError/notConnected`` (also while reconnecting).
    public func flush(timeout: Duration? = nil) throws(NATSError) {
        let milliseconds = try LibNATS.timeout(timeout ?? options.timeout, "timeout")
        try LibNATS.check(natsConnection_FlushTimeout(pointer, milliseconds))
    }

    /// Closes the connection for good: subscriptions end, blocked requests fail with
    /// ``NATSError/notConnected`` or time out, and ``Event/disconnected`` (when it was connected) and
    /// ``Event/closed`` follow. Idempotent.
    ///
    /// A connected connection is drained first (`natsConnection_DrainTimeout`): libnats unsubscribes
    /// everything, waits for the server's answer to a flush, lets the handlers finish what had
    /// arrived, then closes (its threads end just after). Blocks until it is closed: a round trip
    /// and up to 100 ms, up to ``Options/timeout`` when called from a subscription's handler (that
    /// subscription cannot finish draining first) or with a JetStream subscription or KV watch still
    /// open (libnats then deletes its consumer, a request whose answer the drain no longer reads).
    /// Otherwise (connecting, reconnecting, closed) it closes at once (`natsConnection_Close`).
    ///
    /// Why drain: libnats 3.4.1's read loop (Debian 12's libnats; nats.c issue 637, fixed upstream
    /// in 3.6.1) hands a message to a subscription it holds no reference to, and
    /// `natsConnection_Close` frees subscriptions (its request muxer's always) before it stops that
    /// loop, so a close amid arriving messages wrote into freed memory. Draining leaves no
    /// subscription for the read loop to find by the time the close frees them.
    public func close() {
        if natsConnection_DrainTimeout(pointer, LibNATS.milliseconds(options.timeout)) == NATS_OK {
            // libnats drains on a thread of its own, which closes the connection when done or when
            // the timeout is up; the bound here is only a safety net.
            let deadline = ContinuousClock.now + options.timeout + .seconds(1)
            while !natsConnection_IsClosed(pointer) && ContinuousClock.now < deadline { usleep(1000) }
        }
        natsConnection_Close(pointer)
    }

    /// Waits until libnats' read loop is done with every message it read before now: the answer to
    /// a flush sent now (`natsConnection_FlushTimeout`) is read after them. Call it between
    /// unsubscribing and destroying a libnats subscription, which libnats 3.4.1's read loop may have
    /// looked up just before the unsubscribe and still be using without a reference (see
    /// ``close()``). Returns at once when not connected: no read loop runs while reconnecting, and
    /// ``close()`` drains first, which leaves the read loop no subscription to find. Blocks up to
    /// ``Options/timeout``.
    func waitForReadLoop() {
        guard isConnected else { return }
        _ = natsConnection_FlushTimeout(pointer, LibNATS.milliseconds(options.timeout))
    }
}
