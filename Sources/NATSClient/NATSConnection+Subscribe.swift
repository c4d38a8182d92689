import CNATS

extension NATSConnection {
    /// Subscribes to `subject` (wildcards `*` and `>` allowed; `natsConnection_Subscribe`), or as a
    /// member of `queueGroup`, where each message goes to one member only
    /// (`natsConnection_QueueSubscribe`).
    ///
    /// `handler` runs on the subscription's own libnats delivery thread, one message at a time;
    /// see ``NATSSubscription`` for when it stops. The subscription is registered when this returns,
    /// but the server may see it only after a ``flush(timeout:)``: flush before relying on it from
    /// another connection.
    /// - Throws: ``NATSError/invalid(_:)`` for an empty or malformed subject or queue group;
    ///   ``NATSError/notConnected`` when closed.
    public func subscribe(
        _ subject: String, queueGroup: String? = nil, handler: @escaping @Sendable (NATSMessage) -> Void
    ) throws(NATSError) -> NATSSubscription {
        guard !subject.isEmpty else { throw .invalid("the subject is empty") }
        if let queueGroup, queueGroup.isEmpty { throw .invalid("the queue group is empty") }
        return try NATSSubscription.make(owner: self, connection: self, deliver: { handler(NATSMessage(copying: $0)) }) {
            callback, closure throws(NATSError) in
            var subscription: OpaquePointer?
            let status = withOptionalCString(queueGroup) { group in
                group == nil
                    ? natsConnection_Subscribe(&subscription, pointer, subject, callback, closure)
                    : natsConnection_QueueSubscribe(&subscription, pointer, subject, group, callback, closure)
            }
            try LibNATS.check(status)
            guard let subscription else {
                throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "libnats returned no subscription")
            }
            return subscription
        }
    }
}
