import CNATS

/// A JetStream context on a connection (libnats' `jsCtx`): streams, persisted publishes, stored
/// messages, consumers and KV buckets. Made by ``NATSConnection/jetStream(domain:prefix:timeout:)``.
///
/// Every call is a request to the server's JetStream API and blocks up to ``timeout`` (unless the
/// call takes its own); run them off event loops.
///
/// Sendable: libnats' JetStream calls are thread-safe, the context pointer is immutable after
/// init, and the context is destroyed only in deinit, when no call can be running on it.
public final class JetStream: @unchecked Sendable {
    /// libnats' context, destroyed in deinit.
    let pointer: OpaquePointer
    /// The connection it uses, kept alive while the context exists.
    public let connection: NATSConnection
    /// How long each API call waits for the server (`jsOptions.Wait`).
    public let timeout: Duration
    /// The JetStream API subject prefix: `$JS.API` (libnats' `jsDefaultAPIPrefix`),
    /// `$JS.<domain>.API` for a domain, or the given prefix without a trailing dot. Subjects of KV
    /// writes start with it when it is not the default, as in libnats' kv.c.
    let apiPrefix: String

    init(pointer: OpaquePointer, connection: NATSConnection, timeout: Duration, apiPrefix: String) {
        self.pointer = pointer
        self.connection = connection
        self.timeout = timeout
        self.apiPrefix = apiPrefix
    }

    deinit { jsCtx_Destroy(pointer) }

    /// The default API prefix (libnats' `jsDefaultAPIPrefix`, js.c).
    static let defaultAPIPrefix = "$JS.API"
}

extension NATSConnection {
    /// A JetStream context (`natsConnection_JetStream`) for the account's JetStream, or for the
    /// one of `domain` (API prefix `$JS.<domain>.API`), or behind an API `prefix` (e.g. one an
    /// account import maps). Does not talk to the server.
    /// - Parameter timeout: how long each JetStream call waits; default ``Options/timeout``.
    /// - Throws: ``NATSError/invalid(_:)`` for both a domain and a prefix, an empty one, or a
    ///   timeout that is not positive.
    public func jetStream(domain: String? = nil, prefix: String? = nil, timeout: Duration? = nil) throws(NATSError) -> JetStream {
        if domain != nil && prefix != nil { throw .invalid("give a JetStream domain or an API prefix, not both") }
        if domain?.isEmpty == true || prefix?.isEmpty == true { throw .invalid("the JetStream domain or prefix is empty") }
        let wait = timeout ?? options.timeout
        var jsOptions = jsOptions()
        try LibNATS.check(jsOptions_Init(&jsOptions))
        jsOptions.Wait = try LibNATS.timeout(wait, "timeout")
        var context: OpaquePointer?
        let status = withOptionalCString(domain) { domainPointer in
            withOptionalCString(prefix) { prefixPointer in
                jsOptions.Domain = domainPointer
                jsOptions.Prefix = prefixPointer
                return natsConnection_JetStream(&context, pointer, &jsOptions)
            }
        }
        try LibNATS.check(status)
        guard let context else {
            throw .status(code: Int32(bitPattern: NATS_ERR.rawValue), text: "natsConnection_JetStream returned no context")
        }
        let apiPrefix: String
        if let domain {
            apiPrefix = "$JS.\(domain.hasSuffix(".") ? String(domain.dropLast()) : domain).API"
        } else if let prefix {
            apiPrefix = prefix.hasSuffix(".") ? String(prefix.dropLast()) : prefix
        } else {
            apiPrefix = JetStream.defaultAPIPrefix
        }
        return JetStream(pointer: context, connection: self, timeout: wait, apiPrefix: apiPrefix)
    }
}
