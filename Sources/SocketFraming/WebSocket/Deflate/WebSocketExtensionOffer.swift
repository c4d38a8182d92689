/// One extension of a `Sec-WebSocket-Extensions` header (RFC 6455 §9.1): its name and its parameters in
/// the order they were written, as the handshake's header parser hands them over.
///
/// The same type carries a client's offer and a server's response (RFC 7692 §5 calls both "extension
/// negotiation" elements). For `permessage-deflate; client_max_window_bits; server_max_window_bits=10`:
///
///     WebSocketExtensionOffer(name: "permessage-deflate", parameters: [
///         .init(name: "client_max_window_bits", value: nil),
///         .init(name: "server_max_window_bits", value: "10")
///     ])
///
/// Values are given after quoted-string unescaping (RFC 7692 §7.1: `x="10"` and `x=10` are the same
/// value), and names as written; the negotiation compares names without regard to ASCII case.
public struct WebSocketExtensionOffer: Sendable, Equatable, Hashable {
    /// One `name` or `name=value` parameter of an extension.
    public struct Parameter: Sendable, Equatable, Hashable {
        /// The parameter's name, e.g. `server_max_window_bits`.
        public var name: String
        /// The parameter's value without quotes, or nil for a parameter written without `=`.
        public var value: String?

        /// Creates a parameter; `value` nil for one written without `=`.
        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// The extension's name (token), e.g. `permessage-deflate`.
    public var name: String
    /// The parameters in the order they were written; duplicates are kept (the negotiation refuses them).
    public var parameters: [Parameter]

    /// Creates an offer or response element.
    public init(name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }
}
