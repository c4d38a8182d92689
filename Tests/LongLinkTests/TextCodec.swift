import Foundation
import LongLink
import SocketFraming

/// A minimal link protocol for tests: UTF-8 text in 4-byte big-endian length-prefixed frames, with
/// "PING" as the heartbeat and "PONG" as its acknowledgement. A server's refusals are "BYE: " and the
/// refusal (``LinkRefusal``'s description); "BYE: server shutting down" says the server is going away.
/// Frames that are not UTF-8 are protocol errors; messages starting with "unencodable" cannot be encoded.
struct TextCodec: LinkCodec {
    struct NotText: Error, CustomStringConvertible {
        var description: String { "not UTF-8 text" }
    }

    func makeDecoder() -> LengthFieldBasedFrameDecoder { .lengthPrefixed(maxFrameLength: 1 << 16) }
    func message(from frame: Data) throws -> String {
        guard let text = String(data: frame, encoding: .utf8) else { throw NotText() }
        return text
    }
    func encode(_ message: String) throws -> Data {
        if message.hasPrefix("unencodable") { throw NotText() }
        return try LengthFieldPrepender(lengthFieldLength: 4).encode(Data(message.utf8))
    }
    func farewell(_ refusal: LinkRefusal, version: UInt16?) -> String? { "BYE: \(refusal)" }
    func isGoingAway(_ message: String) -> Bool { message == "BYE: server shutting down" }
    var heartbeat: String { "PING" }
    var heartbeatAck: String { "PONG" }
    func isHeartbeat(_ message: String) -> Bool { message == "PING" }
    func isHeartbeatAck(_ message: String) -> Bool { message == "PONG" }

    /// The wire bytes of `message`.
    static func frame(_ message: String) -> Data { (try? TextCodec().encode(message)) ?? Data() }
}
