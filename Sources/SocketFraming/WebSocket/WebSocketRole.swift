/// Which end of a WebSocket connection a codec serves; it decides the masking rule (RFC 6455 §5.1, §5.3).
///
/// A client masks every frame it sends and a server masks none. So a server's decoder refuses an unmasked
/// frame and a client's decoder refuses a masked one, both with close code 1002.
public enum WebSocketRole: Sendable, Hashable {
    /// The end that sent the opening handshake: sends masked frames, receives unmasked ones.
    case client
    /// The end that accepted the handshake: sends unmasked frames, receives masked ones.
    case server
}
