extension NATSConnection {
    /// How ``NATSConnection/connect(_:events:)`` connects and reconnects; each field is passed to
    /// the libnats option named in its comment.
    public struct Options: Sendable, Equatable {
        /// The servers, as `nats://host:port` URLs (`natsOptions_SetServers`), tried in this order
        /// (`natsOptions_SetNoRandomize`).
        public var servers: [String]
        /// The connection's name in the server's monitoring (`natsOptions_SetName`); "" for none.
        public var name: String
        /// How long to wait between two rounds of reconnect attempts over all ``servers``
        /// (`natsOptions_SetReconnectWait`). Default 250 ms.
        public var reconnectWait: Duration
        /// How many reconnect attempts per server before the connection closes for good
        /// (`natsOptions_SetMaxReconnect`); -1, the default, tries forever.
        public var maxReconnects: Int
        /// The connect timeout (`natsOptions_SetTimeout`), and the default of this API's other
        /// timeouts: requests, flushes and, through ``NATSConnection/jetStream(domain:prefix:timeout:)``,
        /// JetStream API calls. Default 2 s.
        public var timeout: Duration
        /// Whether ``NATSConnection/connect(_:events:)`` returns a connection that keeps trying
        /// in the background when no server answers the first time
        /// (`natsOptions_SetRetryOnFailedConnect`), reporting ``Event/connected`` once it gets
        /// through; when false, the default, connect throws instead.
        ///
        /// libnats 3.4.1 retries only servers that refuse or do not answer: when the first attempt
        /// reaches a server that accepts the TCP connection and then fails the handshake (one that
        /// is just dying, say), its reconnect thread finds no current server and closes the
        /// connection for good (``Event/closed``, ``NATSConnection/lastError`` "No server available
        /// for connection").
        public var retryOnFailedConnect: Bool

        /// Options with the defaults given at each field.
        public init(
            servers: [String],
            name: String = "",
            reconnectWait: Duration = .milliseconds(250),
            maxReconnects: Int = -1,
            timeout: Duration = .seconds(2),
            retryOnFailedConnect: Bool = false
        ) {
            self.servers = servers
            self.name = name
            self.reconnectWait = reconnectWait
            self.maxReconnects = maxReconnects
            self.timeout = timeout
            self.retryOnFailedConnect = retryOnFailedConnect
        }
    }
}
