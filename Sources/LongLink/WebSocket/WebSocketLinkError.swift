import SocketFraming
import WebSocket

/// Why a LongLink connection carried by a WebSocket (<doc:LongLinkOverWebSocket>) was ended by this side:
/// the peer broke the rule that each LongLink frame travels as exactly one binary message, or broke
/// RFC 6455 itself, or (a client) its opening handshake failed. Only that connection ends.
///
/// A ``LongLinkClient`` reports it inside `SocketError.decodingFailed(_:)`: as
/// ``LongLinkClient/Event/connectFailed(_:)`` for ``opening(_:)``, otherwise as the
/// ``LongLinkClient/DisconnectReason/protocolError(_:)`` `"\(error)"`. A ``LongLinkServer`` reports
/// ``LongLinkServer/CloseReason/protocolError(_:)`` with the codec's ``LinkCodec/describe(_:)`` of it
/// (by default `"\(error)"`), after telling the client with the codec's farewell and a Close frame
/// carrying ``closeCode``.
public enum WebSocketLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A text message arrived: LongLink frames are binary messages. Closed with 1003 (unsupported data,
    /// RFC 6455 §7.4.1).
    case textMessage
    /// A binary message that is not exactly one whole LongLink frame: `messageBytes` long, holding no
    /// whole frame (`frameBytes` nil) or a frame of `frameBytes` followed by more bytes. Closed with
    /// 1008 (policy violation, RFC 6455 §7.4.1).
    case notOneFrame(messageBytes: Int, frameBytes: Int?)
    /// The codec's decoder refused the message's bytes. Closed with 1008.
    case invalidFrame(FramingError)
    /// The WebSocket layer failed the connection (a broken frame 1002, a message over the limit 1009;
    /// RFC 6455 §7.1.7): the result it closed with.
    case webSocket(WebSocketCloseResult)
    /// A client's opening handshake (RFC 6455 §4.1) failed: the server's answer was not a `101` that
    /// accepts the key, or could not be read within the connect timeout.
    case opening(WebSocketConnectError)

    /// The close code this side sends for the error (RFC 6455 §7.4.1).
    public var closeCode: WebSocketCloseCode {
        switch self {
        case .textMessage: return .unsupportedData
        case .notOneFrame, .invalidFrame: return .policyViolation
        case .webSocket(let result): return result.code
        case .opening: return .protocolError
        }
    }

    public var description: String {
        switch self {
        case .textMessage: return "a text message (LongLink frames are binary messages)"
        case .notOneFrame(let bytes, nil): return "a binary message of \(bytes) bytes that holds no whole frame"
        case .notOneFrame(let bytes, let frame?): return "a binary message of \(bytes) bytes holding a frame of \(frame) bytes and more"
        case .invalidFrame(let error): return "an invalid frame: \(error)"
        case .webSocket(let result): return "WebSocket failed: \(result)"
        case .opening(let error): return "WebSocket opening handshake: \(error)"
        }
    }
}
