import Foundation
import LongLink
import SocketFraming

/// The chat's wire format: a seven-byte header (version, function code, compressed flag, body length;
/// big-endian, MISSION M3.4 and article 003) before a JSON body, compressed with zlib when it is longer
/// than ``compressionThreshold`` bytes. docs/PROTOCOL.md lists the bodies.
///
/// Two protocol versions travel through the same codec. A message's version is part of its value
/// (``ChatMessage/version``): the version 1 cases are encoded with version field 1 and their version 1
/// bodies, byte for byte as before version 2 existed, and ``ChatMessage/v2(_:)`` with version field 2
/// and the version 2 bodies. Decoding accepts both versions and refuses any other. So one codec (one
/// `LongLinkServer<ChatCodec>`) serves every connection, each in its client's version, and the version
/// costs encoding nothing (no extra copy: the body is encoded once and appended after the header).
///
/// Encoding checks a version 2 message against the same bounds decoding does (``ProtocolError``), so it
/// never sends what the other side would refuse, except the form of user names, which only decoding
/// checks (``UserName/isWellFormed(_:)``): a server sends the names it admitted, and the server checks
/// what a client sends it; so a delivery costs no name check on the way out.
public struct ChatCodec: LinkCodec {
    /// The header versions this codec decodes: 1 and 2 (``ChatProtocolVersion``).
    public static let versions: Set<UInt16> = Set(ChatProtocolVersion.allCases.map(\.rawValue))
    /// The largest id, sequence number, position, time (ms) or `retryAfter` (s) version 2 carries:
    /// 2^53 − 1 = 9,007,199,254,740,991, JavaScript's `Number.MAX_SAFE_INTEGER`, the largest integer below
    /// which every integer is exact in an IEEE 754 double (what JSON numbers become in JavaScript and
    /// in Python's `float`).
    public static let maxExactInteger: UInt64 = (1 << 53) - 1
    /// The most messages a version 2 history request may ask for (and a history may hold): 100.
    public static let maxHistoryLimit = 100
    /// The most conversations a version 2 login's `positions` may list: 1,000.
    public static let maxPositions = 1_000
    /// The longest password a version 2 login may carry: 1,024 bytes of UTF-8 (a password is at least 1 byte).
    public static let maxPasswordBytes = 1_024
    /// The length of a client instance id: 32 lowercase hexadecimal digits (128 bits).
    public static let clientInstanceLength = 32

    /// The version of the heartbeat this codec's client side sends (``heartbeat``, ``heartbeatAck``):
    /// a version 2 client's codec uses ``ChatProtocolVersion/v2``, so every frame it sends is version 2.
    /// Decoding is not affected. Default ``ChatProtocolVersion/v1``.
    public var version: ChatProtocolVersion
    /// JSON bodies longer than this many bytes are sent zlib-compressed (flag 1). Default 512 bytes.
    public var compressionThreshold: Int
    /// The most bytes a body may have once decompressed. Default 64 KiB.
    public var maxBodyLength: Int

    /// A codec whose heartbeat is in `version` (default 1), compressing bodies over
    /// `compressionThreshold` bytes (default 512) and refusing bodies over `maxBodyLength` bytes
    /// (default 64 KiB = 65,536).
    public init(version: ChatProtocolVersion = .v1, compressionThreshold: Int = 512, maxBodyLength: Int = 64 * 1024) {
        self.version = version
        self.compressionThreshold = compressionThreshold
        self.maxBodyLength = maxBodyLength
    }

    /// Errors in a frame that decoded but is not a valid chat message; the cases after `malformedBody`
    /// are values of a version 2 body out of bounds, thrown by decoding and, for a message this side
    /// made, by encoding.
    public enum ProtocolError: Error, Equatable, CustomStringConvertible {
        /// The header's version is not one of ``ChatCodec/versions``.
        case unsupportedVersion(UInt16)
        /// The function code is not one of ``FunctionCode``, or is a version 2 code
        /// (``FunctionCode/isVersion2Only``) in a version 1 frame.
        case unknownFunctionCode(UInt16)
        /// The body is not the JSON this function code requires.
        case malformedBody(functionCode: UInt16, reason: String)
        /// The number under JSON key `key` (`id`, `seq`, `time`, `retryAfter`, `positions`) is over
        /// ``ChatCodec/maxExactInteger``, or 0 where it must be at least 1 (`id`, `seq`).
        case numberOutOfRange(key: String, value: UInt64)
        /// A time before 1970 or past ``ChatCodec/maxExactInteger`` milliseconds (encoding only: on the
        /// wire a time is an unsigned number of milliseconds).
        case timeOutOfRange(Date)
        /// A history request's `limit` is not 1 to ``ChatCodec/maxHistoryLimit``, or a who's is not 1 to
        /// ``ChatCodec/maxWhoLimit`` (both 100).
        case limitOutOfRange(Int)
        /// A history holds more than ``ChatCodec/maxHistoryLimit`` messages.
        case tooManyHistoryMessages(Int)
        /// A login's `positions` lists more than ``ChatCodec/maxPositions`` conversations.
        case tooManyPositions(Int)
        /// A login's `client` is not 32 lowercase hexadecimal digits.
        case invalidClientInstance(String)
        /// A login's `password` has this many bytes of UTF-8: 0, or over ``ChatCodec/maxPasswordBytes``.
        case invalidPasswordLength(bytes: Int)
        /// Not a conversation id: neither `room` nor `direct:` and two well-formed user names separated
        /// by one space.
        case invalidConversation(String)
        /// A list of names under JSON key `key` (`names` of online users; `online` and `offline` of
        /// presence changes, counted together) holds `count` names, over ``ChatCodec/maxWhoLimit`` or
        /// ``ChatCodec/maxPresenceListed`` (both 100).
        case tooManyNames(key: String, count: Int)
        /// A user name in a who, online users or presence changes body is not well formed
        /// (``UserName/isWellFormed(_:)``: empty, or with white space, control or formatting characters).
        case invalidName(String)
        /// The count under JSON key `key` (`onlineCount`, `unlisted`) is negative or over
        /// ``ChatCodec/maxExactInteger``.
        case countOutOfRange(key: String, value: Int)

        /// One line for logs, naming the offending value.
        public var description: String {
            switch self {
            case .unsupportedVersion(let version): return "unsupported protocol version \(version)"
            case .unknownFunctionCode(let code): return "unknown function code \(code)"
            case .malformedBody(let code, let reason):
                let hex = ChatCodec.hex(code)
                return
                    "malformed body of \(FunctionCode(rawValue: code).map { "a \($0) message (function code \(hex))" } ?? "function code \(hex)"): \(reason)"
            case .numberOutOfRange(let key, let value): return "\(key) out of range: \(value)"
            case .timeOutOfRange(let time): return "time out of range: \(time)"
            case .limitOutOfRange(let limit): return "limit out of range (1-\(ChatCodec.maxHistoryLimit)): \(limit)"
            case .tooManyHistoryMessages(let count):
                return "history of \(count) messages (at most \(ChatCodec.maxHistoryLimit))"
            case .tooManyPositions(let count): return "\(count) positions (at most \(ChatCodec.maxPositions))"
            case .invalidClientInstance(let client):
                return "client instance is not 32 lowercase hex digits: \(ChatMessage.short(client))"
            case .invalidPasswordLength(let bytes):
                return "password of \(bytes) bytes (1-\(ChatCodec.maxPasswordBytes))"
            case .invalidConversation(let text): return "not a conversation id: \(ChatMessage.short(text))"
            case .tooManyNames(let key, let count): return "\(count) names in \(key) (at most 100)"
            case .invalidName(let name): return "not a user name: \(ChatMessage.short(name))"
            case .countOutOfRange(let key, let value): return "\(key) out of range: \(value)"
            }
        }
    }

    /// A decoder of the chat's frames: bodies up to ``maxBodyLength`` bytes once decompressed, and a
    /// header that must carry one of ``ChatCodec/versions``, one of the ``FunctionCode``s of that version
    /// (``FunctionCode/isVersion2Only`` codes in version 2 frames only) and a body length of at most
    /// ``maxBodyLength`` (65,535, the field's maximum, with the default), checked as soon as its 7 bytes
    /// arrive, before any wait for the body: a stream that has lost its place, or another protocol (an
    /// HTTP request), fails at once with `FramingError.unsupportedVersion`, `.unknownFunctionCode`,
    /// `.malformedHeader` or `.frameTooLong` instead of waiting for a body length read from the wrong
    /// bytes.
    public func makeDecoder() -> SevenByteHeaderFrameDecoder {
        SevenByteHeaderFrameDecoder(
            maxDecompressedBodyLength: maxBodyLength, acceptedVersions: ChatCodec.versions,
            isKnownFunctionCode: { code, version in
                FunctionCode(rawValue: code).map { version == ChatProtocolVersion.v2.rawValue || !$0.isVersion2Only } ?? false
            },
            maxWireBodyLength: min(maxBodyLength, SevenByteHeaderFrame.maxWireBodyLength))
    }

    /// The heartbeat in ``version``: ``ChatMessage/heartbeat`` or `.v2(.heartbeat)`.
    public var heartbeat: ChatMessage { version == .v2 ? .v2(.heartbeat) : .heartbeat }
    /// The heartbeat acknowledgement in ``version``: ``ChatMessage/heartbeatAck`` or `.v2(.heartbeatAck)`.
    public var heartbeatAck: ChatMessage { version == .v2 ? .v2(.heartbeatAck) : .heartbeatAck }
    /// True for the heartbeat of either version.
    public func isHeartbeat(_ message: ChatMessage) -> Bool { message == .heartbeat || message == .v2(.heartbeat) }
    /// True for the heartbeat acknowledgement of either version.
    public func isHeartbeatAck(_ message: ChatMessage) -> Bool { message == .heartbeatAck || message == .v2(.heartbeatAck) }
    /// The acknowledgement in the heartbeat's own version, so a server answers each client in its version.
    public func heartbeatAck(answering heartbeat: ChatMessage) -> ChatMessage {
        heartbeat.version == .v2 ? .v2(.heartbeatAck) : .heartbeatAck
    }

    /// The wire bytes of `message`: header (version field ``ChatMessage/version``) and JSON body.
    /// - Throws: ``FramingError/messageTooLong(length:maxLength:)`` when the JSON body is longer than
    ///   ``maxBodyLength`` (which the receiver would refuse) or, compressed, over 65,535 bytes;
    ///   ``ProtocolError`` when a version 2 message holds a value out of bounds.
    public func encode(_ message: ChatMessage) throws -> Data {
        let body = try Bodies.encode(message)
        guard body.count <= maxBodyLength else {
            throw FramingError.messageTooLong(length: body.count, maxLength: maxBodyLength)
        }
        let frame = SevenByteHeaderFrame(
            version: message.version.rawValue,
            functionCode: message.functionCode.rawValue,
            isCompressed: body.count > compressionThreshold,
            body: body)
        return try SevenByteHeaderFrameEncoder().encode(frame)
    }

    /// The message in `frame`: a version 1 case for a version 1 frame, ``ChatMessage/v2(_:)`` for a
    /// version 2 frame.
    /// - Throws: ``ProtocolError``: the version, the function code, the JSON, or a value out of bounds.
    public func message(from frame: SevenByteHeaderFrame) throws -> ChatMessage {
        guard let version = ChatProtocolVersion(rawValue: frame.version) else {
            throw ProtocolError.unsupportedVersion(frame.version)
        }
        guard let code = FunctionCode(rawValue: frame.functionCode), version == .v2 || !code.isVersion2Only else {
            throw ProtocolError.unknownFunctionCode(frame.functionCode)
        }
        do {
            switch version {
            case .v1: return try Bodies.decode(code, frame.body)
            case .v2: return .v2(try BodiesV2.decode(code, frame.body))
            }
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw ProtocolError.malformedBody(functionCode: frame.functionCode, reason: ChatCodec.plainWords(error))
        }
    }
}

/// The JSON bodies, one `Codable` struct per function code.
enum Bodies {
    struct Login: Codable { var name: String; var resumeToken: String? }
    struct LoginAccepted: Codable { var name: String; var online: [String]; var onlineCount: Int; var resumeToken: String }
    struct DirectMessage: Codable { var to: String; var text: String }
    struct Broadcast: Codable { var text: String }
    struct Delivery: Codable { var from: String; var text: String; var direct: Bool }
    struct Presence: Codable { var name: String; var online: Bool }
    struct Empty: Codable {}
    struct Failure: Codable { var code: ChatErrorCode; var detail: String }

    /// The encoder of every body (sorted keys, slashes as they are), made once: `JSONEncoder` is
    /// thread-safe, and one made per message cost every frame an allocation and its options' set-up.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func encode(_ message: ChatMessage) throws -> Data {
        switch message {
        case .login(let name, let token): return try encoder.encode(Login(name: name, resumeToken: token))
        case .loginAccepted(let name, let online, let count, let token):
            return try encoder.encode(LoginAccepted(name: name, online: online, onlineCount: count, resumeToken: token))
        case .directMessage(let to, let text): return try encoder.encode(DirectMessage(to: to, text: text))
        case .broadcast(let text): return try encoder.encode(Broadcast(text: text))
        case .delivery(let from, let text, let direct): return try encoder.encode(Delivery(from: from, text: text, direct: direct))
        case .presence(let name, let online): return try encoder.encode(Presence(name: name, online: online))
        case .heartbeat, .heartbeatAck: return try encoder.encode(Empty())
        case .error(let code, let detail): return try encoder.encode(Failure(code: code, detail: detail))
        case .v2(let message): return try BodiesV2.encode(message, with: encoder)
        }
    }

    static func decode(_ code: FunctionCode, _ body: Data) throws -> ChatMessage {
        let decoder = JSONDecoder()
        switch code {
        case .login:
            let login = try decoder.decode(Login.self, from: body)
            return .login(name: login.name, resumeToken: login.resumeToken)
        case .loginAccepted:
            let accepted = try decoder.decode(LoginAccepted.self, from: body)
            return .loginAccepted(
                name: accepted.name, online: accepted.online, onlineCount: accepted.onlineCount,
                resumeToken: accepted.resumeToken)
        case .directMessage:
            let direct = try decoder.decode(DirectMessage.self, from: body)
            return .directMessage(to: direct.to, text: direct.text)
        case .broadcast:
            return .broadcast(text: try decoder.decode(Broadcast.self, from: body).text)
        case .delivery:
            let delivery = try decoder.decode(Delivery.self, from: body)
            return .delivery(from: delivery.from, text: delivery.text, isDirect: delivery.direct)
        case .presence:
            let presence = try decoder.decode(Presence.self, from: body)
            return .presence(name: presence.name, online: presence.online)
        case .heartbeat: return .heartbeat
        case .heartbeatAck: return .heartbeatAck
        case .error:
            let failure = try decoder.decode(Failure.self, from: body)
            return .error(code: failure.code, detail: failure.detail)
        case .stored, .received, .receipt, .historyRequest, .history, .who, .onlineUsers, .presenceChanges:
            throw ChatCodec.ProtocolError.unknownFunctionCode(code.rawValue)  // version 2 only
        }
    }
}
