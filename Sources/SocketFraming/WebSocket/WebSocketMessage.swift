import Foundation

/// What `WebSocketMessageAssembler` hands on: a whole data message (its fragments joined) or a control
/// frame, which may arrive between the fragments of a message (RFC 6455 §5.4, §5.5).
public enum WebSocketMessage: Hashable, Sendable {
    /// A text message, validated as UTF-8 (RFC 6455 §5.6).
    case text(String)
    /// A binary message: its bytes as the application sent them.
    case binary(Data)
    /// A ping's payload (at most 125 bytes); answer it with a pong carrying the same bytes (§5.5.2).
    case ping(Data)
    /// A pong's payload (at most 125 bytes) (§5.5.3).
    case pong(Data)
    /// A close frame's code and reason, validated (§5.5.1, §7.4).
    case close(WebSocketClosePayload)
}
