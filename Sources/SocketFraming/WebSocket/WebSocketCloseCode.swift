/// A close frame's status code (RFC 6455 §7.4): 2 bytes, network byte order, at the start of the payload.
///
/// Which codes may travel (``isValidOnWire``), from RFC 6455 §7.4.1–§7.4.2 and the IANA "WebSocket Close
/// Code Number Registry" (https://www.iana.org/assignments/websocket/websocket.xml):
///
/// | codes | on the wire | source |
/// | --- | --- | --- |
/// | 0–999 | never | §7.4.2: "not used" |
/// | 1000–1003 | yes | §7.4.1 |
/// | 1004 | never | §7.4.1: reserved, meaning may be defined later |
/// | 1005, 1006 | never | §7.4.1: "MUST NOT be set as a status code in a Close control frame" |
/// | 1007–1011 | yes | §7.4.1 |
/// | 1012–1014 | yes | IANA registry: Service Restart, Try Again Later, Bad Gateway |
/// | 1015 | never | §7.4.1: TLS handshake failure, "MUST NOT be set" |
/// | 1016–2999 | never | §7.4.2: reserved for this protocol and its extensions; none registered |
/// | 3000–3999 | yes | §7.4.2: registered with IANA by libraries and frameworks |
/// | 4000–4999 | yes | §7.4.2: private use, by agreement between the ends |
/// | 5000–65535 | never | outside every range §7.4.2 defines |
///
/// Choice: 1012–1014 are accepted when received and may be sent, since they are registered and servers
/// use them (a restart, overload); the same table applies to both directions, so what we send the peer
/// accepts. A receiver that gets a code not valid on the wire fails the connection with 1002, as the
/// Autobahn TestSuite's cases 7.9.x expect.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's number.
    public let rawValue: UInt16

    /// The code numbered `rawValue`, valid on the wire or not.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection has been fulfilled (RFC 6455 §7.4.1).
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: an end is going away, a server shutting down or a browser leaving the page (§7.4.1).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol (§7.4.1).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: the peer sent a type of data this end cannot accept, e.g. binary to a text-only end (§7.4.1).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: no status code was present; reported locally, never sent (§7.4.1).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection ended without a close frame; reported locally, never sent (§7.4.1).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a message's data does not match its type, e.g. a text message that is not UTF-8 (§7.4.1, §8.1).
    public static let invalidPayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message broke this end's policy, when no other code fits (§7.4.1).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a frame or message is too big to process (§7.4.1).
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected the server to negotiate an extension it did not (§7.4.1).
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met an unexpected condition (§7.4.1).
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// 1012: the server is restarting (IANA registry).
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    /// 1013: the server is overloaded; try again later (IANA registry).
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)
    /// 1014: a gateway or proxy got an invalid answer from upstream (IANA registry).
    public static let badGateway = WebSocketCloseCode(rawValue: 1014)
    /// 1015: the TLS handshake failed; reported locally, never sent (§7.4.1).
    public static let tlsHandshakeFailure = WebSocketCloseCode(rawValue: 1015)

    /// Whether the code may appear in a close frame, sent or received: 1000–1003, 1007–1014, 3000–4999
    /// (see the table in the type's documentation). A received close frame with any other code is a
    /// protocol error (1002); `WebSocketClosePayload` refuses to build one.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The number, e.g. "1000".
    public var description: String { String(rawValue) }
}
