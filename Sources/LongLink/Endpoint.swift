/// One server a ``LongLinkClient`` may connect to: a host (a name or a numeric IPv4 or IPv6 address)
/// and a TCP port. A link's ``LongLinkClient/Configuration/endpoints`` lists one or more, the nodes of
/// one service; the link moves to the next one when a connection drops or a connect fails.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or numeric address (`"chat.example"`, `"127.0.0.1"`, `"::1"`), without
    /// brackets.
    public var host: String
    /// The server's TCP port.
    public var port: UInt16

    /// The server at `host` (without brackets for IPv6) and `port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with an IPv6 address (any host containing a colon) in brackets:
    /// `"127.0.0.1:7777"`, `"chat.example:7777"`, `"[::1]:7777"`.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
