/// The client's side of the opening handshake (RFC 6455 §4.1): the GET request it sends, and the check of
/// the server's answer.
///
///     let handshake = WebSocketClientHandshake(url: try WebSocketURL("ws://server.example.com/chat"),
///                                              subprotocols: ["chat", "superchat"])
///     send(handshake.request.bytes)
///     // … parse the answer with HTTPResponseHeadParser, then:
///     let accepted = try handshake.validate(responseHead)   // subprotocol, extensions
///
/// The request, for the URL above and the key of RFC 6455 §1.2:
///
///     GET /chat HTTP/1.1
///     Host: server.example.com
///     Upgrade: websocket
///     Connection: Upgrade
///     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==
///     Sec-WebSocket-Version: 13
///     Sec-WebSocket-Protocol: chat, superchat
public struct WebSocketClientHandshake: Sendable {
    /// Where the client connects.
    public let url: WebSocketURL
    /// `Sec-WebSocket-Key`: by default 16 fresh random bytes in base64 (§4.1 item 7).
    public let key: String
    /// The subprotocols offered, in order of preference; empty: no `Sec-WebSocket-Protocol`.
    public let subprotocols: [String]
    /// The extensions offered, in order of preference (permessage-deflate's offer last, when ``deflate``
    /// is set); empty: no `Sec-WebSocket-Extensions`.
    public let extensions: [WebSocketExtension]
    /// permessage-deflate offered with these settings (RFC 7692), and the answer checked against them;
    /// nil: not offered.
    public let deflate: PerMessageDeflate.ClientConfiguration?
    /// The request to send: GET of `url.resourceName`, HTTP/1.1, `Host`, `Upgrade: websocket`,
    /// `Connection: Upgrade`, `Sec-WebSocket-Key`, `Sec-WebSocket-Version: 13`, then
    /// `Sec-WebSocket-Protocol` and `Sec-WebSocket-Extensions` if any are offered, then the custom headers.
    public let request: HTTPRequestHead

    /// The handshake for `url`.
    /// - Parameters:
    ///   - url: where to connect; its resource name is the request target, its host and port `Host`.
    ///   - subprotocols: offered in `Sec-WebSocket-Protocol`, in order of preference; default none.
    ///   - extensions: offered in `Sec-WebSocket-Extensions`, in order of preference; default none.
    ///   - deflate: offer permessage-deflate (``PerMessageDeflate/ClientConfiguration/offer``, after
    ///     `extensions`) and check the server's answer to it; default nil, not offered.
    ///   - headers: added after the handshake's own fields (`Origin`, `Authorization`, cookies).
    ///   - key: for tests; leave it nil for a fresh random key.
    /// - Precondition: `subprotocols` are tokens, `extensions` valid header elements, `key` (if given) is
    ///   valid, and no custom header is
    ///   invalid (`HTTPHeaders.isValidField`) or one the handshake writes itself (`Host`, `Upgrade`,
    ///   `Connection`, `Sec-WebSocket-Key`, `-Version`, `-Protocol`, `-Extensions`): programmer errors.
    public init(
        url: WebSocketURL, subprotocols: [String] = [], extensions: [WebSocketExtension] = [],
        deflate: PerMessageDeflate.ClientConfiguration? = nil, headers: HTTPHeaders = HTTPHeaders(), key: String? = nil
    ) {
        let extensions = extensions + (deflate.map { [$0.offer] } ?? [])
        let key = key ?? WebSocketHandshake.randomKey()
        precondition(WebSocketHandshake.isValidKey(key), "invalid Sec-WebSocket-Key \(key)")
        precondition(subprotocols.allSatisfy(HTTPSyntax.isToken), "subprotocols must be tokens")
        precondition(extensions.allSatisfy(\.isValidHeaderElement), "extension names, parameters and values must be tokens")
        var fields: HTTPHeaders = [
            ("Host", url.hostHeader), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Version", WebSocketHandshake.version)
        ]
        if !subprotocols.isEmpty { fields.append(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", ")) }
        if !extensions.isEmpty { fields.append(name: "Sec-WebSocket-Extensions", value: WebSocketExtension.headerValue(extensions)) }
        for field in headers {
            precondition(HTTPHeaders.isValidField(field), "invalid header field \(field.name)")
            precondition(!fields.contains(field.name), "\(field.name) is written by the handshake")
            fields.append(name: field.name, value: field.value)
        }
        self.url = url
        self.key = key
        self.subprotocols = subprotocols
        self.extensions = extensions
        self.deflate = deflate
        request = HTTPRequestHead(method: "GET", target: url.resourceName, headers: fields)
    }

    /// What the server accepted, once its answer passed `validate(_:)`.
    public struct Accepted: Equatable, Sendable {
        /// The subprotocol the server chose (one the client offered), or nil.
        public var subprotocol: String?
        /// The extensions in use, in the server's order, each one the client offered by name.
        public var extensions: [WebSocketExtension]
        /// What permessage-deflate's answer agreed (RFC 7692 §7.1), or nil when the server did not accept it.
        public var deflate: PerMessageDeflate.Agreement?

        /// What a server accepted: `subprotocol`, `extensions` and the permessage-deflate `deflate` agreement.
        public init(subprotocol: String?, extensions: [WebSocketExtension], deflate: PerMessageDeflate.Agreement? = nil) {
            self.subprotocol = subprotocol
            self.extensions = extensions
            self.deflate = deflate
        }
    }

    /// Checks the server's answer (§4.1, "the client MUST validate the server's response"): status 101,
    /// `Upgrade` with the token `websocket`, `Connection` with the token `upgrade`, one
    /// `Sec-WebSocket-Accept` equal to the key's accept value, at most one subprotocol and only one that
    /// was offered, extensions well-formed and only ones offered by name; permessage-deflate, when
    /// ``deflate`` offered it, at most once and acceptable (``PerMessageDeflate/ClientConfiguration/accept(_:)``).
    /// An error with a ``WebSocketClientHandshakeError/closeCode`` (1010) is about extensions: the client
    /// fails the connection with a Close frame of that code (RFC 6455 §7.4.1).
    public func validate(_ response: HTTPResponseHead) throws(WebSocketClientHandshakeError) -> Accepted {
        let headers = response.headers
        switch response.statusCode {
        case 101: break
        case 300..<400: throw .redirectRefused(status: response.statusCode, location: headers.first("Location"))
        default: throw .unexpectedStatus(response.statusCode)
        }
        guard headers.containsToken("websocket", for: "Upgrade") else { throw .missingUpgradeToken }
        guard headers.containsToken("upgrade", for: "Connection") else { throw .missingConnectionToken }
        let accepts = headers.values(for: "Sec-WebSocket-Accept")
        guard accepts.count == 1, let accept = accepts.first, accept == WebSocketHandshake.acceptValue(forKey: key) else {
            throw .acceptMismatch(accepts.first)
        }
        let chosen = headers.tokens(for: "Sec-WebSocket-Protocol")
        guard chosen.count <= 1 else { throw .multipleSubprotocols }
        if let subprotocol = chosen.first, !subprotocols.contains(subprotocol) { throw .unofferedSubprotocol(subprotocol) }
        guard let accepted = WebSocketExtension.parse(headers.values(for: "Sec-WebSocket-Extensions")) else {
            throw .invalidExtensions
        }
        var agreement: PerMessageDeflate.Agreement?
        for candidate in accepted {
            guard extensions.contains(where: { $0.name == candidate.name }) else { throw .unofferedExtension(candidate.name) }
            guard let deflate, candidate.name.lowercased() == PerMessageDeflate.extensionName else { continue }
            guard agreement == nil else { throw .repeatedExtension(candidate.name) }
            do { agreement = try deflate.accept(candidate) } catch { throw .unacceptableExtension(error) }
        }
        return Accepted(subprotocol: chosen.first, extensions: accepted, deflate: agreement)
    }
}

/// Why a client refuses the server's answer to its upgrade request (RFC 6455 §4.1): the connection is
/// then failed (closed without a close frame).
public enum WebSocketClientHandshakeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A 3xx answer: redirects are not followed (§4.1 allows it; following one silently could change the
    /// origin a user trusts). Carries the status and `Location`, if any.
    case redirectRefused(status: Int, location: String?)
    /// An answer other than 101 and 3xx, e.g. 401, 403, 404, 426; carries the status.
    case unexpectedStatus(Int)
    /// `Upgrade` lacks the token `websocket`.
    case missingUpgradeToken
    /// `Connection` lacks the token `upgrade`.
    case missingConnectionToken
    /// `Sec-WebSocket-Accept` missing, repeated, or not the key's accept value; carries the first value.
    case acceptMismatch(String?)
    /// `Sec-WebSocket-Protocol` names more than one subprotocol.
    case multipleSubprotocols
    /// The server chose a subprotocol the client did not offer (§4.1 item 6 of the answer's checks).
    case unofferedSubprotocol(String)
    /// `Sec-WebSocket-Extensions` does not follow RFC 6455 §9.1.
    case invalidExtensions
    /// The server uses an extension the client did not offer; carries its name (RFC 6455 §4.1). 1010.
    case unofferedExtension(String)
    /// The server's answer names an extension (carried) more than once (RFC 7692 §5 allows one
    /// permessage-deflate response element). 1010.
    case repeatedExtension(String)
    /// The server's permessage-deflate response does not fit the offer (RFC 7692 §7.1: the client must
    /// fail the connection), e.g. a `client_max_window_bits` not offered. 1010.
    case unacceptableExtension(PerMessageDeflate.NegotiationError)

    /// The close code to fail a connection with whose answer was refused for its extensions: 1010
    /// (`mandatoryExtension`, "the server didn't return [the extensions] in the response", RFC 6455
    /// §7.4.1) for ``unofferedExtension(_:)``, ``repeatedExtension(_:)`` and ``unacceptableExtension(_:)``,
    /// sent in a Close frame with the error as reason; nil for the others, after which the client simply
    /// closes TCP (the connection was never established, §4.1).
    public var closeCode: WebSocketCloseCode? {
        switch self {
        case .unofferedExtension, .repeatedExtension, .unacceptableExtension: .mandatoryExtension
        default: nil
        }
    }

    /// One English line.
    public var description: String {
        switch self {
        case let .redirectRefused(status, location):
            "WebSocket handshake answered by redirect \(status)\(location.map { " to \($0)" } ?? ""), not followed"
        case let .unexpectedStatus(status): "WebSocket handshake answered by status \(status), not 101"
        case .missingUpgradeToken: "answer's Upgrade header lacks websocket"
        case .missingConnectionToken: "answer's Connection header lacks upgrade"
        case let .acceptMismatch(value): "Sec-WebSocket-Accept \(value ?? "missing") does not match the key"
        case .multipleSubprotocols: "answer names more than one subprotocol"
        case let .unofferedSubprotocol(name): "server chose subprotocol \(name), which was not offered"
        case .invalidExtensions: "malformed Sec-WebSocket-Extensions in the answer"
        case let .unofferedExtension(name): "server uses extension \(name), which was not offered"
        case let .repeatedExtension(name): "server names extension \(name) more than once"
        case let .unacceptableExtension(error): "server's permessage-deflate answer refused: \(error)"
        }
    }
}
