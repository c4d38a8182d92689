import Foundation
import LongLink
import SocketFraming

/// A minimal link protocol for tests: UTF-8 text in 4-byte big-endian length-prefixed frames, with
/// "PING" as the heartbeat and "PONG" as its acknowledgement.
struct TextCodec: LinkCodec {
    func makeDecoder() -> LengthFieldBasedFrameDecoder { .lengthPrefixed(maxFrameLength: 1 << 16) }
    func message(from frame: Data) throws -> String { String(decoding: frame, as: UTF8.self) }
    func encode(_ message: String) throws -> Data { try LengthFieldPrepender(lengthFieldLength: 4).encode(Data(message.utf8)) }
    var heartbeat: String { "PING" }
    var heartbeatAck: String { "PONG" }
    func isHeartbeat(_ message: String) -> Bool { message == "PING" }
    func isHeartbeatAck(_ message: String) -> Bool { message == "PONG" }

    /// The wire bytes of `message`.
    static func frame(_ message: String) -> Data { (try? TextCodec().encode(message)) ?? Data() }
}
