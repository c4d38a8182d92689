extension PerMessageDeflate {
    /// What both ends agreed in the handshake (RFC 7692 §7.1): for each direction, whether its compressor
    /// starts every message afresh and how large its window may be.
    ///
    /// Parameters absent from the response mean context takeover and a 32 KiB window (15 bits).
    public struct Agreement: Sendable, Equatable, Hashable {
        /// The server resets its compressor at every message (`server_no_context_takeover`, §7.1.1.1); the
        /// client may then drop its decompressor's history between messages.
        public var serverNoContextTakeover: Bool
        /// The client resets its compressor at every message (`client_no_context_takeover`, §7.1.1.2); the
        /// server may then drop its decompressor's history between messages.
        public var clientNoContextTakeover: Bool
        /// The server's compression window, in window bits 8–15 (`server_max_window_bits`, §7.1.2.1;
        /// 15 when absent).
        public var serverMaxWindowBits: Int
        /// The client's compression window, in window bits 8–15 (`client_max_window_bits`, §7.1.2.2;
        /// 15 when absent).
        public var clientMaxWindowBits: Int

        /// Creates an agreement; the defaults are those of a response without parameters.
        ///
        /// - Precondition: both window bits are 8...15 (a programmer error otherwise).
        public init(
            serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false, serverMaxWindowBits: Int = 15,
            clientMaxWindowBits: Int = 15
        ) {
            precondition(PerMessageDeflate.windowBitsRange.contains(serverMaxWindowBits), "server window bits \(serverMaxWindowBits)")
            precondition(PerMessageDeflate.windowBitsRange.contains(clientMaxWindowBits), "client window bits \(clientMaxWindowBits)")
            self.serverNoContextTakeover = serverNoContextTakeover
            self.clientNoContextTakeover = clientNoContextTakeover
            self.serverMaxWindowBits = serverMaxWindowBits
            self.clientMaxWindowBits = clientMaxWindowBits
        }

        /// Whether `role`'s outgoing messages are each compressed afresh.
        public func noContextTakeover(sentBy role: Role) -> Bool {
            role == .server ? serverNoContextTakeover : clientNoContextTakeover
        }

        /// The window bits of the messages `role` sends.
        public func maxWindowBits(sentBy role: Role) -> Int {
            role == .server ? serverMaxWindowBits : clientMaxWindowBits
        }
    }
}
