extension PerMessageDeflate {
    /// What a client offers in permessage-deflate, and its check of the server's response (RFC 7692 §7.1).
    public struct ClientConfiguration: Sendable, Equatable, Hashable {
        /// Offer `server_no_context_takeover` (§7.1.1.1): ask the server to compress each message afresh,
        /// so the client's decompressor is freed between messages; default false. A response must then
        /// carry it.
        public var requestServerNoContextTakeover: Bool
        /// Offer `client_no_context_takeover` (§7.1.1.2): tell the server the client compresses each
        /// message afresh; default false. The client honours the parameter in a response either way.
        public var requestClientNoContextTakeover: Bool
        /// The largest window the client inflates, in window bits 8–15, offered as `server_max_window_bits`
        /// when below 15 (§7.1.2.1); default 15 (32 KiB, no parameter). A response must then carry it, no
        /// larger.
        public var serverMaxWindowBits: Int
        /// Offer `client_max_window_bits` (§7.1.2.2), so the server may limit the client's window; default
        /// true (browsers do). Without it a response carrying the parameter is refused.
        public var offerClientMaxWindowBits: Bool
        /// The largest window the client compresses with, in window bits 8–15; default 15. Sent as the
        /// value of `client_max_window_bits` when below 15 (the client promises no larger window); the
        /// server's value, when smaller, wins.
        public var clientMaxWindowBits: Int

        /// Creates a client configuration; see the properties for the defaults.
        ///
        /// - Precondition: both window bits are 8...15 (a programmer error otherwise).
        public init(
            requestServerNoContextTakeover: Bool = false, requestClientNoContextTakeover: Bool = false,
            serverMaxWindowBits: Int = 15, offerClientMaxWindowBits: Bool = true, clientMaxWindowBits: Int = 15
        ) {
            precondition(PerMessageDeflate.windowBitsRange.contains(serverMaxWindowBits), "server window bits \(serverMaxWindowBits)")
            precondition(PerMessageDeflate.windowBitsRange.contains(clientMaxWindowBits), "client window bits \(clientMaxWindowBits)")
            self.requestServerNoContextTakeover = requestServerNoContextTakeover
            self.requestClientNoContextTakeover = requestClientNoContextTakeover
            self.serverMaxWindowBits = serverMaxWindowBits
            self.offerClientMaxWindowBits = offerClientMaxWindowBits
            self.clientMaxWindowBits = clientMaxWindowBits
        }

        /// The offer to send in `Sec-WebSocket-Extensions`, e.g. `permessage-deflate; client_max_window_bits`
        /// with the defaults.
        public var offer: WebSocketExtension {
            var parameters: [WebSocketExtension.Parameter] = []
            if requestServerNoContextTakeover { parameters.append(.init(name: ParameterName.serverNoContextTakeover.rawValue)) }
            if requestClientNoContextTakeover { parameters.append(.init(name: ParameterName.clientNoContextTakeover.rawValue)) }
            if serverMaxWindowBits < 15 {
                parameters.append(.init(name: ParameterName.serverMaxWindowBits.rawValue, value: String(serverMaxWindowBits)))
            }
            if offerClientMaxWindowBits {
                let value = clientMaxWindowBits < 15 ? String(clientMaxWindowBits) : nil
                parameters.append(.init(name: ParameterName.clientMaxWindowBits.rawValue, value: value))
            }
            return WebSocketExtension(name: PerMessageDeflate.extensionName, parameters: parameters)
        }

        /// Checks the server's response to ``offer`` and returns what was agreed.
        ///
        /// - Throws: a ``NegotiationError``, after which the client must fail the WebSocket connection
        ///   (RFC 7692 §5, §7.1): another extension's name; an unknown or duplicate parameter or an invalid
        ///   value (`client_max_window_bits` needs a value in a response); `client_max_window_bits` when
        ///   not offered; `server_no_context_takeover` or `server_max_window_bits` missing though asked for;
        ///   `server_max_window_bits` above the offer's.
        public func accept(_ response: WebSocketExtension) throws(NegotiationError) -> Agreement {
            guard response.name.lowercased() == PerMessageDeflate.extensionName else {
                throw .notPermessageDeflate(name: response.name)
            }
            let answered = try Parameters(response.parameters, in: .response)
            if requestServerNoContextTakeover && !answered.serverNoContextTakeover {
                throw .missingParameter(name: ParameterName.serverNoContextTakeover.rawValue)
            }
            let serverBits = answered.serverMaxWindowBits ?? 15
            if serverMaxWindowBits < 15 {
                guard answered.serverMaxWindowBits != nil else {
                    throw .missingParameter(name: ParameterName.serverMaxWindowBits.rawValue)
                }
                guard serverBits <= serverMaxWindowBits else {
                    throw .windowBitsAboveOffer(
                        parameter: ParameterName.serverMaxWindowBits.rawValue, offered: serverMaxWindowBits, answered: serverBits)
                }
            }
            var clientBits = clientMaxWindowBits
            if case let .bits(bits) = answered.clientMaxWindowBits {
                guard offerClientMaxWindowBits else { throw .parameterNotOffered(name: ParameterName.clientMaxWindowBits.rawValue) }
                clientBits = min(clientBits, bits)
            }
            return Agreement(
                serverNoContextTakeover: answered.serverNoContextTakeover,
                clientNoContextTakeover: answered.clientNoContextTakeover || requestClientNoContextTakeover,
                serverMaxWindowBits: serverBits, clientMaxWindowBits: clientBits)
        }
    }
}
