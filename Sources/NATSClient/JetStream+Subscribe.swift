import CNATS

extension JetStream {
    /// Delivers every message a stream stores under `subject` (wildcards allowed) from now on, in
    /// stream order: an ordered push consumer (`js_Subscribe` with `jsSubOptions.Ordered` and
    /// `js_DeliverNew`). "Now" is when the server creates the consumer, before this returns: a
    /// message stored after the return is delivered, none stored before it.
    ///
    /// libnats keeps the order across losses: on a gap, or when two 5 s heartbeats are missed
    /// (after a server restart, which loses the consumer), it recreates the consumer from the
    /// next sequence. The consumer is ephemeral, in the server's memory, and without
    /// acknowledgements.
    ///
    /// `handler` runs on the subscription's libnats delivery thread, one message at a time; see
    /// ``NATSSubscription`` for when it stops. Its ``NATSSubscription/unsubscribe()`` also deletes
    /// the consumer. Blocks up to ``timeout`` twice (finding the stream, creating the consumer).
    /// - Throws: ``NATSError/status(code:text:)`` (`NATS_NOT_FOUND`) when no stream stores
    ///   `subject`; ``NATSError/jetStream(errorCode:text:)`` when the server refuses the consumer;
    ///   ``NATSError/timeout``; ``NATSError/invalid(_:)`` for an empty subject.
    public func subscribeNew(
        filter subject: String, handler: @escaping @Sendable (StoredMessage) -> Void
    ) throws(NATSError) -> NATSSubscription {
        guard !subject.isEmpty else { throw .invalid("the filter subject is empty") }
        let deliver: @Sendable (OpaquePointer) -> Void = { message in
            // Consumer deliveries carry stream sequence and time in their reply subject; a message
            // without them (none is expected) is dropped.
            var metadata: UnsafeMutablePointer<jsMsgMetaData>?
            guard natsMsg_GetMetaData(&metadata, message) == NATS_OK, let metadata else { return }
            defer { jsMsgMetaData_Destroy(metadata) }
            handler(
                StoredMessage(
                    copying: message, sequence: metadata.pointee.Sequence.Stream,
                    nanosecondsSince1970: metadata.pointee.Timestamp))
        }
        return try NATSSubscription.make(owner: self, connection: connection, deliver: deliver) { callback, closure throws(NATSError) in
            var options = jsSubOptions()
            jsSubOptions_Init(&options)
            options.Ordered = true
            options.Config.DeliverPolicy = js_DeliverNew
            var subscription: OpaquePointer?
            var code = jsErrCode(rawValue: 0)
            try LibNATS.check(js_Subscribe(&subscription, pointer, subject, callback, closure, nil, &options, &code), code)
            guard let subscription else {
                throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "js_Subscribe returned no subscription")
            }
            return subscription
        }
    }
}
