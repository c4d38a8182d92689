import Foundation
import LongLink
import SocketFraming

/// The chat's wire format: a seven-byte header (version 1, function code, compressed flag, body length;
/// big-endian, MISSION M3.4 and article 003) before a JSON body, compressed with zlib when it is longer
/// than ``compressionThreshold`` bytes. docs/PROTOCOL.md lists the bodies.
public struct ChatCodec: LinkCodec {
    /// The protocol version this codec speaks, in the header's version field.
    public static let version: UInt16 = 1
    /// JSON bodies longer than this many bytes are sent zlib-compressed (flag 1). Default 512 bytes.
    public var compressionThreshold: Int
    /// The most bytes a body may have once decompressed. Default 64 KiB.
    public var maxBodyLength: Int

    public init(compressionThreshold: Int = 512, maxBodyLength: Int = 64 * 1024) {
        self.compressionThreshold = compressionThreshold
        self.maxBodyLength = maxBodyLength
    }

    /// Errors in a frame that decoded but is not a valid chat message.
    public enum ProtocolError: Error, Equatable, CustomStringConvertible {
        /// The header's version is not ``ChatCodec/version``.
        case unsupportedVersion(UInt16)
        /// The function code is not one of ``FunctionCode``.
        case unknownFunctionCode(UInt16)
        /// The body is not the JSON this function code requires.
        case malformedBody(functionCode: UInt16, reason: String)

        public var description: String {
            switch self {
            case .unsupportedVersion(let version): return "unsupported protocol version \(version)"
            case .unknownFunctionCode(let code): return "unknown function code \(code)"
            case .malformedBody(let code, let reason): return "malformed body for function code \(code): \(reason)"
            }
        }
    }

    /// A decoder of the chat's frames: bodies up to ``maxBodyLength`` bytes once decompressed, and a
    /// header that must carry ``ChatCodec/version`` and one of the ``FunctionCode``s, checked as soon as its
    /// 7 bytes arrive, so a stream that has lost its place fails at once with
    /// `FramingError.unsupportedVersion` or `.unknownFunctionCode` instead of waiting for a body length
    /// read from the wrong bytes.
    public func makeDecoder() -> SevenByteHeaderFrameDecoder {
        SevenByteHeaderFrameDecoder(maxDecompressedBodyLength: maxBodyLength, acceptedVersions: [ChatCodec.version],
                                    isKnownFunctionCode: { FunctionCode(rawValue: $0) != nil })
    }

    public var heartbeat: ChatMessage { .heartbeat }
    public var heartbeatAck: ChatMessage { .heartbeatAck }
    public func isHeartbeat(_ message: ChatMessage) -> Bool { message == .heartbeat }
    public func isHeartbeatAck(_ message: ChatMessage) -> Bool { message == .heartbeatAck }

    /// The wire bytes of `message`: header and JSON body.
    /// - Throws: ``FramingError/messageTooLong(length:maxLength:)`` when the JSON body is longer than
    ///   ``maxBodyLength`` (which the receiver would refuse) or, compressed, over 65,535 bytes.
    public func encode(_ message: ChatMessage) throws -> Data {
        let body = try Bodies.encode(message)
        guard body.count <= maxBodyLength else {
            throw FramingError.messageTooLong(length: body.count, maxLength: maxBodyLength)
        }
        let frame = SevenByteHeaderFrame(
            version: ChatCodec.version,
            functionCode: message.functionCode.rawValue,
            isCompressed: body.count > compressionThreshold,
            body: body)
        return try SevenByteHeaderFrameEncoder().encode(frame)
    }

    /// The message in `frame`.
    /// - Throws: ``ProtocolError``.
    public func message(from frame: SevenByteHeaderFrame) throws -> ChatMessage {
        guard frame.version == ChatCodec.version else { throw ProtocolError.unsupportedVersion(frame.version) }
        guard let code = FunctionCode(rawValue: frame.functionCode) else {
            throw ProtocolError.unknownFunctionCode(frame.functionCode)
        }
        do {
            return try Bodies.decode(code, frame.body)
        } catch {
            throw ProtocolError.malformedBody(functionCode: frame.functionCode, reason: "\(error)")
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

    static func encode(_ message: ChatMessage) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
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
            return .loginAccepted(name: accepted.name, online: accepted.online, onlineCount: accepted.onlineCount,
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
        }
    }
}
