extension PerMessageDeflate {
    /// Why an offer (server side) or a response (client side) of permessage-deflate was refused.
    ///
    /// A server that refuses every offer goes on without the extension (RFC 7692 §5: it declines); a
    /// client that refuses the server's response must fail the WebSocket connection (RFC 7692 §5, §7.1).
    public enum NegotiationError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
        /// The element names another extension, not `permessage-deflate` (a response checked by the client).
        case notPermessageDeflate(name: String)
        /// A parameter RFC 7692 §7.1 does not define (§5: "not defined for use in an offer/response").
        case unknownParameter(name: String)
        /// The parameter appears more than once (RFC 7692 §7.1: "multiple extension parameters with the
        /// same name").
        case duplicateParameter(name: String)
        /// A parameter defined without a value has one (`server_no_context_takeover` and
        /// `client_no_context_takeover`, RFC 7692 §7.1.1.1, §7.1.1.2).
        case unexpectedValue(parameter: String, value: String)
        /// A parameter that must carry a value has none: `server_max_window_bits` in an offer or a
        /// response (§7.1.2.1), `client_max_window_bits` in a response (§7.1.2.2).
        case missingValue(parameter: String)
        /// A window bits value that is not a decimal integer 8–15 without leading zeros (RFC 7692 §7.1.2.1,
        /// §7.1.2.2: `1*DIGIT`, "without leading zeroes between 8 to 15, inclusive").
        case invalidWindowBits(parameter: String, value: String)
        /// The response has `client_max_window_bits`, which the client's offer did not have (§7.1.2.2:
        /// the client must then fail the connection).
        case parameterNotOffered(name: String)
        /// The response lacks a parameter the offer asked the server to accept: `server_no_context_takeover`
        /// (§7.1.1.1) or `server_max_window_bits` (§7.1.2.1).
        case missingParameter(name: String)
        /// The response's `server_max_window_bits` is larger than the offer's: the client could not
        /// inflate the server's messages with the window it has (§7.1.2.1).
        case windowBitsAboveOffer(parameter: String, offered: Int, answered: Int)

        /// One line in English, e.g. "duplicate parameter server_max_window_bits".
        public var description: String {
            switch self {
            case let .notPermessageDeflate(name): "extension \(name) is not permessage-deflate"
            case let .unknownParameter(name): "unknown parameter \(name)"
            case let .duplicateParameter(name): "duplicate parameter \(name)"
            case let .unexpectedValue(parameter, value): "parameter \(parameter) takes no value, got \(value)"
            case let .missingValue(parameter): "parameter \(parameter) needs a value"
            case let .invalidWindowBits(parameter, value): "\(parameter)=\(value) is not 8 to 15 without leading zeros"
            case let .parameterNotOffered(name): "the response has \(name), which the offer did not have"
            case let .missingParameter(name): "the response lacks \(name), which the offer asked for"
            case let .windowBitsAboveOffer(parameter, offered, answered):
                "the response's \(parameter)=\(answered) is above the offer's \(offered)"
            }
        }
    }
}
