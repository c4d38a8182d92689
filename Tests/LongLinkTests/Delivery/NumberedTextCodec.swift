import Foundation
import LongLink
import SocketFraming

/// ``TextCodec`` with numbering, for the reliable-delivery tests. Messages are text lines:
///
/// | message | meaning |
/// | --- | --- |
/// | `#17 hi` | client → server: app message "hi" numbered 17 |
/// | `?what` | client → server: an app message the codec does not number |
/// | `login room=3,x=1` | client → server: the greeting with its positions |
/// | `ack room 3` | client → server: everything of "room" up to 3 received |
/// | `stored 17` / `refused 17 why` | server → client: message 17 stored / refused |
/// | `busy 17 2` | server → client: message 17 not taken now; resend after 2 s |
/// | `deliver room 3 hi` | server → client: delivery 3 of "room" |
///
/// A message starting `batch\n` encodes as its following lines, each as its own frame, in one write,
/// so that the client reads them in one loop pass.
struct NumberedTextCodec: ReliableLinkCodec {
    func makeDecoder() -> LengthFieldBasedFrameDecoder { .lengthPrefixed(maxFrameLength: 1 << 16) }
    func message(from frame: Data) throws -> String { String(decoding: frame, as: UTF8.self) }
    func encode(_ message: String) throws -> Data {
        let prepender = LengthFieldPrepender(lengthFieldLength: 4)
        guard message.hasPrefix("batch\n") else { return try prepender.encode(Data(message.utf8)) }
        var data = Data()
        for line in message.split(separator: "\n").dropFirst() { data.append(try prepender.encode(Data(line.utf8))) }
        return data
    }
    var heartbeat: String { "PING" }
    var heartbeatAck: String { "PONG" }
    func isHeartbeat(_ message: String) -> Bool { message == "PING" }
    func isHeartbeatAck(_ message: String) -> Bool { message == "PONG" }

    func message(_ message: String, numbered id: UInt64) -> String {
        message.hasPrefix("?") ? message : "#\(id) \(message)"
    }

    func id(of message: String) -> UInt64? {
        guard message.hasPrefix("#") else { return nil }
        return UInt64(message.dropFirst().prefix { $0 != " " })
    }

    func role(of message: String) -> DeliveryRole {
        let words = message.split(separator: " ", maxSplits: 3)
        switch words.first {
        case "stored" where words.count == 2:
            return UInt64(words[1]).map { .stored(id: $0) } ?? .other
        case "refused" where words.count >= 2:
            return UInt64(words[1]).map { .refused(id: $0) } ?? .other
        case "busy" where words.count == 3:
            guard let id = UInt64(words[1]), let seconds = Int64(words[2]) else { return .other }
            return .retry(id: id, after: .seconds(seconds))
        case "deliver" where words.count >= 3:
            return UInt64(words[2]).map { .delivery(conversation: String(words[1]), sequence: $0) } ?? .other
        default:
            return .other
        }
    }

    func acknowledgement(conversation: String, upTo sequence: UInt64) -> String { "ack \(conversation) \(sequence)" }

    /// The greeting for `positions`: "login" and the positions in conversation order.
    static func login(_ positions: DeliveryPositions) -> String {
        positions.isEmpty ? "login" : "login " + positions.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    /// The wire bytes of `message`.
    static func frame(_ message: String) -> Data { (try? NumberedTextCodec().encode(message)) ?? Data() }
}
