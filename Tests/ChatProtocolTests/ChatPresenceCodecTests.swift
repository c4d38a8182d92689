@testable import ChatProtocol
import Foundation
import LongLink
import SocketFraming
import Testing

/// Issue 12: the version 2 messages `who`, `onlineUsers`, `presenceChanges` and the login key
/// `presenceChanges` (docs/PROTOCOL.md "Presence", "Who"): exact bodies and bytes, round trips, bounds on
/// encode and decode, refused in version 1 frames.
@Suite struct ChatPresenceCodecTests {
    let codec = ChatCodec()

    /// Each new message with its exact JSON body (sorted keys, as the codec writes them and the doc shows).
    static let bodies: [(ChatMessageV2, String)] = [
        (
            .login(
                name: "ann", password: nil, resumeToken: nil, clientInstance: ChatCodecV2Tests.client, positions: [:],
                presenceChanges: true),
            #"{"client":"0123456789abcdef0123456789abcdef","name":"ann","positions":{},"presenceChanges":true}"#
        ),
        (.who(after: "bob", limit: 100), #"{"after":"bob","limit":100}"#),
        (.who(after: nil, limit: 100), #"{"limit":100}"#),
        (.onlineUsers(names: ["carl", "dan"], onlineCount: 1234, more: true), #"{"more":true,"names":["carl","dan"],"onlineCount":1234}"#),
        (.onlineUsers(names: [], onlineCount: 3, more: false), #"{"more":false,"names":[],"onlineCount":3}"#),
        (
            .presenceChanges(online: ["a"], offline: ["b"], onlineCount: 1234, unlisted: 0),
            #"{"offline":["b"],"online":["a"],"onlineCount":1234,"unlisted":0}"#
        )
    ]

    func frame(version: UInt16 = 2, _ code: FunctionCode, _ body: String) -> SevenByteHeaderFrame {
        SevenByteHeaderFrame(version: version, functionCode: code.rawValue, body: Data(body.utf8))
    }

    func decode(_ bytes: Data) throws -> ChatMessage? {
        var reader = FrameReader(decoder: codec.makeDecoder())
        reader.append(bytes)
        guard let frame = try reader.nextFrame() else { return nil }
        return try codec.message(from: frame)
    }

    @Test func bodiesAreExactAndRoundTrip() throws {
        for (message, json) in Self.bodies {
            let bytes = try codec.encode(.v2(message))
            #expect(String(decoding: bytes.dropFirst(7), as: UTF8.self) == json, "\(message)")
            #expect(try codec.message(from: frame(message.functionCode, json)) == .v2(message))
        }
    }

    @Test func exampleBytes() throws {
        func hex(_ message: ChatMessageV2) throws -> String {
            try codec.encode(.v2(message)).map { String(format: "%02X", $0) }.joined(separator: " ")
        }
        #expect(
            try hex(.who(after: "bob", limit: 100)) == "00 02 00 19 00 00 1B "
                + "7B 22 61 66 74 65 72 22 3A 22 62 6F 62 22 2C 22 6C 69 6D 69 74 22 3A 31 30 30 7D")
        #expect(
            try hex(.onlineUsers(names: ["carl", "dan"], onlineCount: 1234, more: true)) == "00 02 00 1A 00 00 37 "
                + "7B 22 6D 6F 72 65 22 3A 74 72 75 65 2C 22 6E 61 6D 65 73 22 3A 5B 22 63 61 72 6C 22 2C 22 64 61 6E 22 5D 2C "
                + "22 6F 6E 6C 69 6E 65 43 6F 75 6E 74 22 3A 31 32 33 34 7D")
        #expect(
            try hex(.presenceChanges(online: ["a"], offline: ["b"], onlineCount: 1234, unlisted: 0)) == "00 02 00 1B 00 00 40 "
                + "7B 22 6F 66 66 6C 69 6E 65 22 3A 5B 22 62 22 5D 2C 22 6F 6E 6C 69 6E 65 22 3A 5B 22 61 22 5D 2C 22 6F 6E 6C 69 "
                + "6E 65 43 6F 75 6E 74 22 3A 31 32 33 34 2C 22 75 6E 6C 69 73 74 65 64 22 3A 30 7D")
    }

    /// A login without the key (every client before issue 12, the Python one) asks for single presence
    /// messages; `false` is never sent, and read like a missing key.
    @Test func theLoginKeyIsOptionalAndDefaultsToFalse() throws {
        let client = ChatCodecV2Tests.client
        let plain = ChatMessageV2.login(name: "ann", password: nil, resumeToken: nil, clientInstance: client, positions: [:])
        #expect(
            plain
                == .login(
                    name: "ann", password: nil, resumeToken: nil, clientInstance: client, positions: [:],
                    presenceChanges: false))
        #expect(
            String(decoding: try codec.encode(.v2(plain)).dropFirst(7), as: UTF8.self)
                == #"{"client":"0123456789abcdef0123456789abcdef","name":"ann","positions":{}}"#)
        #expect(try codec.message(from: frame(.login, #"{"client":"\#(client)","name":"ann","presenceChanges":false}"#)) == .v2(plain))
        #expect(try codec.message(from: frame(.login, #"{"client":"\#(client)","name":"ann"}"#)) == .v2(plain))
    }

    static let tooMany = (0...100).map { "u\($0)" }
    static let maxCount = Int(ChatCodec.maxExactInteger)

    /// Values out of bounds, refused with these errors on decode and on encode.
    static let outOfBounds: [(ChatMessageV2, ChatCodec.ProtocolError)] = [
        (.who(after: nil, limit: 0), .limitOutOfRange(0)),
        (.who(after: nil, limit: 101), .limitOutOfRange(101)),
        (.onlineUsers(names: tooMany, onlineCount: 101, more: false), .tooManyNames(key: "names", count: 101)),
        (.onlineUsers(names: [], onlineCount: -1, more: false), .countOutOfRange(key: "onlineCount", value: -1)),
        (.onlineUsers(names: [], onlineCount: maxCount + 1, more: false), .countOutOfRange(key: "onlineCount", value: maxCount + 1)),
        (
            .presenceChanges(online: Array(tooMany.prefix(60)), offline: Array(tooMany.suffix(41)), onlineCount: 1, unlisted: 0),
            .tooManyNames(key: "online and offline", count: 101)
        ),
        (.presenceChanges(online: [], offline: [], onlineCount: 1, unlisted: -3), .countOutOfRange(key: "unlisted", value: -3)),
        (
            .presenceChanges(online: [], offline: [], onlineCount: maxCount + 1, unlisted: 0),
            .countOutOfRange(key: "onlineCount", value: maxCount + 1)
        )
    ]

    /// Malformed user names, refused when decoded only: names are not checked again on the way out.
    static let malformedNames: [(ChatMessageV2, ChatCodec.ProtocolError)] = [
        (.who(after: "a b", limit: 10), .invalidName("a b")),
        (.who(after: "", limit: 10), .invalidName("")),
        (.onlineUsers(names: ["ok", "not\u{200B}ok"], onlineCount: 2, more: false), .invalidName("not\u{200B}ok")),
        (.presenceChanges(online: [], offline: ["tab\tname"], onlineCount: 1, unlisted: 0), .invalidName("tab\tname")),
        (.presenceChanges(online: ["a\u{2028}b"], offline: [], onlineCount: 1, unlisted: 0), .invalidName("a\u{2028}b"))
    ]

    @Test func valuesOutOfBoundsAreRefusedBothWays() throws {
        for (message, error) in Self.outOfBounds + Self.malformedNames {
            if Self.malformedNames.contains(where: { $0.0 == message }) {
                #expect(throws: Never.self, "encode \(message)") { try codec.encode(.v2(message)) }
            } else {
                #expect(throws: error, "encode \(message)") { try codec.encode(.v2(message)) }
            }
            // The same body, as another implementation might send it.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json: Data
            switch message {
            case .who(let after, let limit): json = try encoder.encode(BodiesV2.Who(after: after, limit: limit))
            case .onlineUsers(let names, let count, let more):
                json = try encoder.encode(BodiesV2.OnlineUsers(more: more, names: names, onlineCount: count))
            case .presenceChanges(let online, let offline, let count, let unlisted):
                json = try encoder.encode(
                    BodiesV2.PresenceChanges(offline: offline, online: online, onlineCount: count, unlisted: unlisted))
            default: json = Data()
            }
            let body = String(decoding: json, as: UTF8.self)
            #expect(throws: error, "decode \(body)") { try codec.message(from: frame(message.functionCode, body)) }
        }
        // The largest values are accepted.
        let largest = ChatMessageV2.presenceChanges(
            online: Array(Self.tooMany.prefix(50)), offline: Array(Self.tooMany.suffix(50)),
            onlineCount: Self.maxCount, unlisted: Self.maxCount)
        #expect(try decode(codec.encode(.v2(largest))) == .v2(largest))
        let page = ChatMessageV2.onlineUsers(names: Array(Self.tooMany.prefix(100)), onlineCount: Self.maxCount, more: true)
        #expect(try decode(codec.encode(.v2(page))) == .v2(page))
    }

    @Test func theNewCodesAreVersion2Only() {
        #expect(
            FunctionCode.who.rawValue == 0x0019 && FunctionCode.onlineUsers.rawValue == 0x001A
                && FunctionCode.presenceChanges.rawValue == 0x001B)
        for code in [FunctionCode.who, .onlineUsers, .presenceChanges] {
            #expect(code.isVersion2Only)
            #expect(throws: ChatCodec.ProtocolError.unknownFunctionCode(code.rawValue)) {
                try codec.message(from: frame(version: 1, code, #"{"limit":1}"#))
            }
        }
    }

    @Test func descriptions() {
        #expect(ChatMessage.v2(.who(after: "bob", limit: 100)).description == "who after bob, up to 100")
        #expect(ChatMessage.v2(.who(after: nil, limit: 5)).description == "who, up to 5")
        #expect(
            ChatMessage.v2(.onlineUsers(names: ["a", "b"], onlineCount: 9, more: true)).description
                == "online users: 2 listed of 9, more")
        #expect(
            ChatMessage.v2(.presenceChanges(online: ["a"], offline: [], onlineCount: 9, unlisted: 4)).description
                == "presence changes: 1 online, 0 offline, 4 unlisted; 9 online now")
        #expect(
            ChatMessage.v2(
                .login(
                    name: "ann", password: nil, resumeToken: nil, clientInstance: "c", positions: [:],
                    presenceChanges: true)
            ).description == "login ann, client c, 0 positions, presence changes")
    }

    @Test func theDocShowsTheBodies() {
        for (message, json) in Self.bodies {
            #expect(ProtocolDocV2Tests.doc.contains("`\(json)`"), "docs/PROTOCOL.md lacks the body of \(message): \(json)")
        }
    }
}
