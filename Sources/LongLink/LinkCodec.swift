import Foundation
import SocketFraming

/// How a long link turns its messages into frames and back, and which messages are the heartbeat and
/// its acknowledgement. The link layer treats those two specially (sends, answers, times them) and
/// hands every other message to the app.
///
/// The articles' heartbeat (MISSION M4) is "a small agreed message" that the server recognises and does
/// not treat as data; this protocol is where the agreement is written down.
public protocol LinkCodec: Sendable {
    /// An application message (including the heartbeat and its acknowledgement).
    associatedtype Message: Sendable
    /// The framing of the byte stream.
    associatedtype Decoder: FrameDecoder & Sendable where Decoder.Frame: Sendable

    /// A fresh decoder for one connection.
    func makeDecoder() -> Decoder
    /// The message a decoded frame carries.
    /// - Throws: any error when the frame is not a valid message; the link then closes that
    ///   connection with a protocol error.
    func message(from frame: Decoder.Frame) throws -> Message
    /// The wire bytes (frame included) of `message`.
    /// - Throws: any error when the message cannot be encoded (too long, for example).
    func encode(_ message: Message) throws -> Data

    /// The client's heartbeat.
    var heartbeat: Message { get }
    /// The server's answer to a heartbeat.
    var heartbeatAck: Message { get }
    /// True when `message` is a heartbeat.
    func isHeartbeat(_ message: Message) -> Bool
    /// True when `message` acknowledges a heartbeat.
    func isHeartbeatAck(_ message: Message) -> Bool
    /// The server's answer to `heartbeat`, a message ``isHeartbeat(_:)`` accepted. A codec that speaks
    /// several protocol versions answers in the heartbeat's version, so every frame a client gets is in
    /// the version it speaks. Default: ``heartbeatAck``.
    func heartbeatAck(answering heartbeat: Message) -> Message

    /// The protocol version `message` travels in, for a codec that speaks several: a server remembers
    /// the version of each client's last message, so that a refusal can be said in it
    /// (``farewell(_:version:)``). Default 0.
    func version(of message: Message) -> UInt16
    /// The message a server sends a client just before it closes the connection for `refusal`: the
    /// client can then show why. `version` is that of the client's last message on the connection
    /// (``version(of:)``), `nil` before any. `nil` closes without a message. Default `nil`.
    func farewell(_ refusal: LinkRefusal, version: UInt16?) -> Message?
    /// True when `message`, from the server, says the server is going away (its answer to
    /// ``LinkRefusal/shuttingDown``): a ``LongLinkClient`` then starts its reconnect schedule over, so
    /// the next attempt is the schedule's first (at once, plus jitter), not a later, longer one. Default
    /// false.
    func isGoingAway(_ message: Message) -> Bool
    /// Plain words for `error`: what the decoder threw (a `FramingError`) or what ``message(from:)``
    /// threw, for a ``LinkRefusal/protocolError(_:)`` told to the client and logged. Default: the error's
    /// description.
    func describe(_ error: any Error) -> String
}

extension LinkCodec {
    /// ``heartbeatAck``, whatever the heartbeat: for codecs that speak one version.
    public func heartbeatAck(answering heartbeat: Message) -> Message { heartbeatAck }
    /// 0: for codecs that speak one version.
    public func version(of message: Message) -> UInt16 { 0 }
    /// `nil`: the connection closes without a message.
    public func farewell(_ refusal: LinkRefusal, version: UInt16?) -> Message? { nil }
    /// false: no message says the server is going away.
    public func isGoingAway(_ message: Message) -> Bool { false }
    /// `"\(error)"`.
    public func describe(_ error: any Error) -> String { "\(error)" }
}
