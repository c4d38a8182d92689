import CNATS

extension JetStream {
    /// The KV bucket `bucket`, created when it does not exist (`js_CreateKeyValue`: a stream
    /// `KV_<bucket>` on file storage), bound as it is when it does (`js_KeyValue`).
    ///
    /// An existing bucket with the same settings is kept; one with other settings is bound without
    /// changing them (libnats refuses the create with "Existing configuration is different").
    /// Blocks up to ``timeout`` two or three times.
    /// - Parameters:
    ///   - bucket: letters, digits, `-` and `_`.
    ///   - maxAge: how long a value lives after its write (the stream's `MaxAge`); nil for ever.
    ///     Values that age out vanish from ``KeyValueBucket/get(_:)`` and ``KeyValueBucket/keys()``
    ///     without a delete marker, so watchers get no change for them.
    ///   - history: revisions kept per key, 1...64 (libnats' `kvMaxHistory`).
    ///   - replicas: copies in a cluster (1 on a single server).
    /// - Throws: ``NATSError/invalid(_:)`` for a bad name, history or replicas;
    ///   ``NATSError/timeout``; ``NATSError/noResponders`` when JetStream is not enabled;
    ///   ``NATSError/status(code:text:)`` with libnats' words otherwise.
    public func keyValue(bucket: String, maxAge: Duration? = nil, history: Int = 1, replicas: Int = 1) throws(NATSError) -> KeyValueBucket {
        guard !bucket.isEmpty else { throw .invalid("the bucket name is empty") }
        guard (1...64).contains(history) else { throw .invalid("history must be 1...64, not \(history)") }
        guard replicas >= 1, replicas <= Int(Int32.max) else { throw .invalid("replicas must be at least 1") }
        if let maxAge, maxAge <= .zero { throw .invalid("maxAge must be positive") }
        var store: OpaquePointer?
        let status = bucket.withCString { name in
            var config = kvConfig()
            kvConfig_Init(&config)
            config.Bucket = name
            config.History = UInt8(history)
            config.TTL = maxAge.map(LibNATS.nanoseconds) ?? 0
            config.Replicas = Int32(replicas)
            config.StorageType = js_FileStorage
            return js_CreateKeyValue(&store, pointer, &config)
        }
        if status != NATS_OK {
            // Read before js_KeyValue overwrites this thread's error text.
            let createError = LibNATS.error(status)
            // Only a refusal by the server (NATS_ERR) may mean "exists with other settings".
            guard status == NATS_ERR, js_KeyValue(&store, pointer, bucket) == NATS_OK else { throw createError }
        }
        guard let store else { throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "libnats returned no KV store") }
        return KeyValueBucket(pointer: store, jetStream: self, name: bucket)
    }
}
