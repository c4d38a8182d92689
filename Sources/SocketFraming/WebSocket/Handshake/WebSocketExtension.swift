/// One extension of a `Sec-WebSocket-Extensions` header (RFC 6455 §9.1): a client's offer, or the one a
/// server accepted, e.g. `permessage-deflate; client_max_window_bits` (RFC 7692 §5 calls both "extension
/// negotiation offers/responses"). The one type for the handshake's header parser, the listener's request,
/// the delegate's open callback and permessage-deflate's negotiation (`PerMessageDeflate`).
///
/// `permessage-deflate; client_max_window_bits; server_max_window_bits="10"` is
///
///     WebSocketExtension(name: "permessage-deflate", parameters: [
///         .init(name: "client_max_window_bits"), .init(name: "server_max_window_bits", value: "10")
///     ])
///
/// Values are kept after quoted-string unescaping (RFC 7692 §7.1: `x="10"` and `x=10` are the same value)
/// and names as written; permessage-deflate's negotiation compares names without regard to ASCII case.
public struct WebSocketExtension: Hashable, Sendable, CustomStringConvertible {
    /// One parameter: a name and, unless it stands alone, a value.
    public struct Parameter: Hashable, Sendable {
        /// The parameter's name, a token.
        public var name: String
        /// The value, unquoted (a quoted-string's value after unescaping; it must be a token, §9.1), or
        /// nil for a parameter without `=`.
        public var value: String?

        /// A parameter `name` or `name=value`.
        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// The extension's name, a token: `permessage-deflate`.
    public var name: String
    /// The parameters in order, as written (names may repeat; the extension decides what that means).
    public var parameters: [Parameter]

    /// An extension `name` with `parameters`, taken as given: an element parsed from the wire has only
    /// tokens (``parse(_:)``), one made by hand is checked where it is written into a header
    /// (``isValidHeaderElement``), so that a negotiation can be handed, and refuse, any value.
    public init(name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }

    /// Whether the element can be written into `Sec-WebSocket-Extensions` as ``description`` writes it:
    /// its name, every parameter's name and every value are tokens (RFC 6455 §9.1).
    public var isValidHeaderElement: Bool {
        HTTPSyntax.isToken(name) && parameters.allSatisfy { HTTPSyntax.isToken($0.name) && $0.value.map(HTTPSyntax.isToken) ?? true }
    }

    /// The header element: `permessage-deflate; client_max_window_bits=10` (values written as tokens).
    public var description: String {
        ([name] + parameters.map { parameter in parameter.value.map { "\(parameter.name)=\($0)" } ?? parameter.name })
            .joined(separator: "; ")
    }

    /// The header value of `extensions`, elements joined by ", ".
    /// - Precondition: every element ``isValidHeaderElement`` (a programmer error otherwise).
    public static func headerValue(_ extensions: [WebSocketExtension]) -> String {
        precondition(extensions.allSatisfy(\.isValidHeaderElement), "extension names, parameters and values must be tokens")
        return extensions.map(\.description).joined(separator: ", ")
    }

    /// The extensions listed in `values`, the values of every `Sec-WebSocket-Extensions` field in order
    /// (several fields read as one list, RFC 9110 §5.3), or nil when one does not follow RFC 6455 §9.1:
    /// `extension *( ";" param )` with `param = token [ "=" ( token / quoted-string ) ]`, whitespace
    /// allowed around `;`, `,` and `=`, a quoted value's unescaped text a token. Empty list elements are
    /// skipped (RFC 9110 §5.6.1).
    public static func parse(_ values: [String]) -> [WebSocketExtension]? {
        var extensions: [WebSocketExtension] = []
        for value in values {
            var reader = ExtensionListReader(bytes: Array(value.utf8))
            guard let parsed = reader.list() else { return nil }
            extensions += parsed
        }
        return extensions
    }
}

/// A recursive-descent reader of one `Sec-WebSocket-Extensions` value.
private struct ExtensionListReader {
    let bytes: [UInt8]
    var index = 0

    mutating func list() -> [WebSocketExtension]? {
        var extensions: [WebSocketExtension] = []
        while true {
            skipWhitespace()
            if index == bytes.count { return extensions }
            if take(UInt8(ascii: ",")) { continue }
            guard let element = element() else { return nil }
            extensions.append(element)
            skipWhitespace()
            guard index == bytes.count || take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func element() -> WebSocketExtension? {
        guard let name = token() else { return nil }
        var parameters: [WebSocketExtension.Parameter] = []
        skipWhitespace()
        while take(UInt8(ascii: ";")) {
            skipWhitespace()
            guard let parameterName = token() else { return nil }
            skipWhitespace()
            var value: String?
            if take(UInt8(ascii: "=")) {
                skipWhitespace()
                guard let parsed = index < bytes.count && bytes[index] == UInt8(ascii: "\"") ? quotedToken() : token() else {
                    return nil
                }
                value = parsed
                skipWhitespace()
            }
            parameters.append(WebSocketExtension.Parameter(name: parameterName, value: value))
        }
        return WebSocketExtension(name: name, parameters: parameters)
    }

    private mutating func token() -> String? {
        let start = index
        while index < bytes.count && HTTPSyntax.isTokenCharacter(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// A quoted-string (RFC 9110 §5.6.4) whose unescaped text is a token.
    private mutating func quotedToken() -> String? {
        index += 1
        var text: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return HTTPSyntax.isToken(text) ? String(decoding: text, as: UTF8.self) : nil
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                text.append(bytes[index])
                index += 1
            default: text.append(byte)
            }
        }
        return nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count && HTTPSyntax.isWhitespace(bytes[index]) { index += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }
}
