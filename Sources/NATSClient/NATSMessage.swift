import CNATS
import Foundation

/// A message received on a subject (by a ``NATSConnection/subscribe(_:queueGroup:handler:)``
/// handler, or as the answer to ``NATSConnection/request(_:_:headers:timeout:)``). A value: it owns
/// copies of the bytes, and libnats' message is already freed.
public struct NATSMessage: Sendable, Equatable {
    /// The subject it was published on.
    public var subject: String
    /// Where the publisher wants an answer (a request's inbox), or nil.
    public var reply: String?
    /// The payload.
    public var data: Data
    /// Its headers (NATS 2.2), the first value of each name; names are case-sensitive (libnats 3).
    public var headers: [String: String]

    /// A message with these values (for tests and fakes; received ones are made by this API).
    public init(subject: String, reply: String? = nil, data: Data, headers: [String: String] = [:]) {
        self.subject = subject
        self.reply = reply
        self.data = data
        self.headers = headers
    }

    /// Copies libnats' message `message` (which the caller still owns and frees).
    init(copying message: OpaquePointer) {
        subject = string(natsMsg_GetSubject(message)) ?? ""
        reply = string(natsMsg_GetReply(message)).flatMap { $0.isEmpty ? nil : $0 }
        data = NATSMessage.data(of: message)
        headers = NATSMessage.headers(of: message)
    }

    /// A copy of the payload of libnats' message `message`.
    static func data(of message: OpaquePointer) -> Data {
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let bytes = natsMsg_GetData(message) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// The headers of libnats' message `message`, the first value of each name.
    static func headers(of message: OpaquePointer) -> [String: String] {
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        var count: Int32 = 0
        guard natsMsgHeader_Keys(message, &keys, &count) == NATS_OK, let keys else { return [:] }
        defer { free(keys) }
        var headers: [String: String] = [:]
        for index in 0..<Int(max(count, 0)) {
            guard let key = keys[index] else { continue }
            var value: UnsafePointer<CChar>?
            guard natsMsgHeader_Get(message, key, &value) == NATS_OK else { continue }
            headers[String(cString: key)] = value.map { String(cString: $0) } ?? ""
        }
        return headers
    }
}

/// A libnats message built for sending: subject, optional reply, payload and headers; freed by
/// `natsMsg_Destroy` when the value is released.
final class OutgoingMessage {
    let pointer: OpaquePointer

    init(subject: String, reply: String? = nil, data: Data, headers: [String: String]) throws(NATSError) {
        guard !subject.isEmpty else { throw .invalid("the subject is empty") }
        guard data.count <= Int(Int32.max) else { throw .invalid("a payload of \(data.count) bytes is too large") }
        var message: OpaquePointer?
        let status = data.withUnsafeBytes { bytes in
            withOptionalCString(reply) { reply in
                natsMsg_Create(&message, subject, reply, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
            }
        }
        try LibNATS.check(status)
        guard let message else {
            throw .status(code: Int32(bitPattern: NATS_NO_MEMORY.rawValue), text: "natsMsg_Create returned no message")
        }
        pointer = message
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, !name.contains(where: { $0 == ":" || $0.isWhitespace }) else {
                throw .invalid("header name \"\(name)\" is empty or has a colon or white space")
            }
            guard !value.contains(where: \.isNewline) else { throw .invalid("the value of header \(name) has a line break") }
            try LibNATS.check(natsMsgHeader_Set(message, name, value))
        }
    }

    deinit { natsMsg_Destroy(pointer) }
}
