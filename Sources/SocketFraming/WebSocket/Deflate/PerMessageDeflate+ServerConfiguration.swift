extension PerMessageDeflate {
    /// What a server accepts and asks for in permessage-deflate, and its choice among a client's offers.
    ///
    /// ## Memory per connection, and the defaults
    /// zlib's state in bytes, counted through a counting `zalloc` on Debian's zlib 1.2.13
    /// (`PerMessageDeflateMemoryTests`; docs/BENCHMARKS.md, "permessage-deflate memory per connection").
    /// zlib's formula (zconf.h) is `(1 << (windowBits + 2)) + (1 << (memLevel + 9))` for deflate, plus a
    /// fixed 5,952 bytes measured; `1 << windowBits` for inflate's window, plus some 7 KiB:
    ///
    /// | window bits | compressor, memLevel 8 | compressor, memLevel 4 | decompressor |
    /// | --- | ---: | ---: | ---: |
    /// | 15 (32 KiB) | 268,096 | 145,216 | 39,928 |
    /// | 12 (4 KiB) | 153,408 | 30,528 | 11,256 |
    /// | 9 (512 B; 8 too) | 139,072 | 16,192 | 7,672 (8: 7,416) |
    ///
    /// A compressor kept for context takeover costs 262 KiB per connection at zlib's defaults, a
    /// decompressor 39 KiB: 100,000 idle connections would hold 30 GB. So by default
    /// - the server asks for `server_no_context_takeover`: its compressor keeps nothing between messages
    ///   and is freed after each one, so an idle connection holds no compressor. The price: on chat-like
    ///   JSON messages of 140 bytes the server sends 83 % of the plain bytes instead of 18 % (framing-bench
    ///   `permessage-deflate`); a server that sends much and holds few connections can turn it off
    ///   (context takeover with 12 bits and memLevel 4 sends 21 % for 30 KiB per connection);
    /// - it limits the client's window to 12 bits (4 KiB) when the client allows it (`client_max_window_bits`
    ///   in the offer, as Chrome sends), so the decompressor kept for the client's context takeover holds
    ///   11 KiB, not 39 KiB, and the client still sends 21 % instead of 18 %;
    /// - it accepts the client's `client_no_context_takeover` hint, and then frees its decompressor
    ///   between messages too (nothing held while idle).
    public struct ServerConfiguration: Sendable, Equatable, Hashable {
        /// Ask for `server_no_context_takeover` even when the client did not (RFC 7692 §7.1.1.1 allows the
        /// server to include it); default true. When the client asks for it, it is granted whatever this is.
        public var serverNoContextTakeover: Bool
        /// Ask for `client_no_context_takeover` even when the client did not offer it (§7.1.1.2); default
        /// false. A client's own hint is always accepted.
        public var clientNoContextTakeover: Bool
        /// The largest window the server compresses with, in window bits 8–15; default 15 (32 KiB). A
        /// client's smaller `server_max_window_bits` is granted (§7.1.2.1); the response carries the result
        /// when it is below 15 or the client asked.
        public var serverMaxWindowBits: Int
        /// The largest window the server accepts from the client, in window bits 8–15; default 12 (4 KiB).
        /// Sent as `client_max_window_bits` only when the offer has that parameter (§7.1.2.2: otherwise the
        /// client cannot honour it and uses 15).
        public var clientMaxWindowBits: Int

        /// Creates a server configuration; see the properties for the defaults.
        ///
        /// - Precondition: both window bits are 8...15 (a programmer error otherwise).
        public init(
            serverNoContextTakeover: Bool = true, clientNoContextTakeover: Bool = false, serverMaxWindowBits: Int = 15,
            clientMaxWindowBits: Int = 12
        ) {
            precondition(PerMessageDeflate.windowBitsRange.contains(serverMaxWindowBits), "server window bits \(serverMaxWindowBits)")
            precondition(PerMessageDeflate.windowBitsRange.contains(clientMaxWindowBits), "client window bits \(clientMaxWindowBits)")
            self.serverNoContextTakeover = serverNoContextTakeover
            self.clientNoContextTakeover = clientNoContextTakeover
            self.serverMaxWindowBits = serverMaxWindowBits
            self.clientMaxWindowBits = clientMaxWindowBits
        }

        /// The server's answer to a client's `Sec-WebSocket-Extensions` offers.
        public enum Decision: Sendable, Equatable {
            /// The offer at `offerIndex` (in the list given) was accepted: send `response` back and use
            /// `agreement`.
            case accepted(agreement: Agreement, response: WebSocketExtension, offerIndex: Int)
            /// No permessage-deflate offer was acceptable (or there was none): go on without the extension.
            /// `refusals` holds, for each permessage-deflate offer in order, why it was refused.
            case declined(refusals: [NegotiationError])
        }

        /// Picks the first acceptable permessage-deflate offer among `offers` (RFC 7692 §5: the client lists
        /// its preferences first); other extensions' offers are skipped.
        ///
        /// An offer is refused (RFC 7692 §7.1) for an unknown or duplicate parameter, or an invalid value
        /// (see ``NegotiationError``). Every valid offer is acceptable: the server can honour any window
        /// of 8–15 bits (8 is compressed with 9, see ``PerMessageDeflate``) and either context mode.
        public func negotiate(_ offers: [WebSocketExtension]) -> Decision {
            var refusals: [NegotiationError] = []
            for (index, offer) in offers.enumerated() where offer.name.lowercased() == PerMessageDeflate.extensionName {
                do {
                    let offered = try Parameters(offer.parameters, in: .offer)
                    let (agreement, response) = accept(offered)
                    return .accepted(agreement: agreement, response: response, offerIndex: index)
                } catch {
                    refusals.append(error)
                }
            }
            return .declined(refusals: refusals)
        }

        /// The agreement and response for one valid offer.
        func accept(_ offered: Parameters) -> (Agreement, WebSocketExtension) {
            var response: [WebSocketExtension.Parameter] = []
            let serverNoContextTakeover = offered.serverNoContextTakeover || self.serverNoContextTakeover
            if serverNoContextTakeover { response.append(.init(name: ParameterName.serverNoContextTakeover.rawValue)) }
            let clientNoContextTakeover = offered.clientNoContextTakeover || self.clientNoContextTakeover
            if clientNoContextTakeover { response.append(.init(name: ParameterName.clientNoContextTakeover.rawValue)) }
            let serverBits = min(serverMaxWindowBits, offered.serverMaxWindowBits ?? 15)
            if offered.serverMaxWindowBits != nil || serverBits < 15 {
                response.append(.init(name: ParameterName.serverMaxWindowBits.rawValue, value: String(serverBits)))
            }
            var clientBits = 15
            switch offered.clientMaxWindowBits {
            case .absent:
                break
            case .supported, .bits:
                let promised = if case let .bits(bits) = offered.clientMaxWindowBits { bits } else { 15 }
                clientBits = min(clientMaxWindowBits, promised)
                if clientBits < 15 {
                    response.append(.init(name: ParameterName.clientMaxWindowBits.rawValue, value: String(clientBits)))
                }
            }
            let agreement = Agreement(
                serverNoContextTakeover: serverNoContextTakeover, clientNoContextTakeover: clientNoContextTakeover,
                serverMaxWindowBits: serverBits, clientMaxWindowBits: clientBits)
            return (agreement, WebSocketExtension(name: PerMessageDeflate.extensionName, parameters: response))
        }
    }
}
