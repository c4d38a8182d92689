@testable import ChatProtocol
import Foundation
import LongLink
import SocketFraming
import Testing
import TestSupport

/// Version 2 of the chat protocol (issue 11, docs/PROTOCOL.md "Version 2"): exact bodies, round trips,
/// refused values, a stream cut anywhere, both versions through one codec, and the reliable-delivery mapping.
@Suite struct ChatCodecV2Tests {
    let codec = ChatCodec()
    static let client = "0123456789abcdef0123456789abcdef"
    /// 2023-11-14 22:13:20.123 UTC: 1,700,000,000,123 ms.
    static let time = Date(timeIntervalSince1970: 1_700_000_000.123)

    /// Every version 2 message with its exact JSON body (sorted keys, as the codec writes them).
    static let bodies: [(ChatMessageV2, String)] = [
        (
            .login(
                name: "ann", password: "secret", resumeToken: nil, clientInstance: client,
                positions: ["room": 12, "direct:ann bob": 3]),
            #"{"client":"0123456789abcdef0123456789abcdef","name":"ann","password":"secret","positions":{"direct:ann bob":3,"room":12}}"#
        ),
        (
            .login(name: "ann", password: nil, resumeToken: "T", clientInstance: client, positions: [:]),
            #"{"client":"0123456789abcdef0123456789abcdef","name":"ann","positions":{},"resumeToken":"T"}"#
        ),
        (
            .loginAccepted(name: "ann", online: ["bob"], onlineCount: 1, resumeToken: "T", stored: true),
            #"{"name":"ann","online":["bob"],"onlineCount":1,"resumeToken":"T","stored":true}"#
        ),
        (.directMessage(id: 17, to: "bob", text: "hi"), #"{"id":17,"text":"hi","to":"bob"}"#),
        (.broadcast(id: 18, text: "hi all"), #"{"id":18,"text":"hi all"}"#),
        (
            .delivery(from: "ann", text: "hi", isDirect: true, conversation: "direct:ann bob", sequence: 5, time: time),
            #"{"conversation":"direct:ann bob","direct":true,"from":"ann","seq":5,"text":"hi","time":1700000000123}"#
        ),
        (
            .delivery(from: "ann", text: "hi all", isDirect: false, conversation: "room", sequence: nil, time: time),
            #"{"conversation":"room","direct":false,"from":"ann","text":"hi all","time":1700000000123}"#
        ),
        (.presence(name: "bob", online: false), #"{"name":"bob","online":false}"#),
        (.heartbeat, "{}"),
        (.heartbeatAck, "{}"),
        (.stored(id: 17, conversation: "direct:ann bob", sequence: 5), #"{"conversation":"direct:ann bob","id":17,"seq":5}"#),
        (.stored(id: 18, conversation: "room", sequence: nil), #"{"conversation":"room","id":18}"#),
        (.received(conversation: "direct:ann bob", upTo: 5), #"{"conversation":"direct:ann bob","seq":5}"#),
        (.receipt(conversation: "direct:ann bob", upTo: 5, by: "bob"), #"{"by":"bob","conversation":"direct:ann bob","seq":5}"#),
        (.historyRequest(conversation: "direct:ann bob", limit: 20), #"{"conversation":"direct:ann bob","limit":20}"#),
        (
            .history(
                conversation: "room",
                messages: [
                    ChatHistoryEntry(sequence: 1, from: "ann", text: "hi all", time: time),
                    ChatHistoryEntry(sequence: 2, from: "bob", text: "hello", time: Date(timeIntervalSince1970: 1_700_000_001))
                ]),
            #"{"conversation":"room","messages":[{"from":"ann","seq":1,"text":"hi all","time":1700000000123},{"from":"bob","seq":2,"text":"hello","time":1700000001000}]}"#
        ),
        (
            .error(code: .unknownRecipient, detail: "nobody is called zed", id: 17, retryAfter: nil),
            #"{"code":"unknownRecipient","detail":"nobody is called zed","id":17}"#
        ),
        (
            .error(code: .throttled, detail: "too many failed logins", id: nil, retryAfter: 30),
            #"{"code":"throttled","detail":"too many failed logins","retryAfter":30}"#
        )
    ]

    func decode(_ bytes: Data) throws -> ChatMessage? {
        var reader = FrameReader(decoder: codec.makeDecoder())
        reader.append(bytes)
        guard let frame = try reader.nextFrame() else { return nil }
        return try codec.message(from: frame)
    }

    func frame(version: UInt16 = 2, _ code: FunctionCode, _ body: String) -> SevenByteHeaderFrame {
        SevenByteHeaderFrame(version: version, functionCode: code.rawValue, body: Data(body.utf8))
    }

    @Test func everyVersion2MessageHasItsExactBodyAndVersionField2() throws {
        #expect(Self.bodies.count == 18)
        for (message, json) in Self.bodies {
            let body = Array(json.utf8)
            let code = message.functionCode.rawValue
            let expected = [0x00, 0x02, UInt8(code >> 8), UInt8(code & 0xFF), 0x00, 0x00, UInt8(body.count)] + body
            #expect([UInt8](try codec.encode(.v2(message))) == expected, "\(message)")
        }
    }

    @Test func everyVersion2MessageSurvivesARoundTrip() throws {
        for (message, _) in Self.bodies {
            #expect(try decode(try codec.encode(.v2(message))) == .v2(message))
        }
    }

    /// The version 1 messages, byte for byte as before version 2 existed: version field 1, version 1 bodies.
    @Test func version1MessagesAreUnchangedByteForByte() throws {
        let v1: [(ChatMessage, UInt16, String)] = [
            (.login(name: "ann", resumeToken: nil), 0x0001, #"{"name":"ann"}"#),
            (.login(name: "ann", resumeToken: "T"), 0x0001, #"{"name":"ann","resumeToken":"T"}"#),
            (
                .loginAccepted(name: "ann", online: ["bob"], onlineCount: 1, resumeToken: "T"), 0x0002,
                #"{"name":"ann","online":["bob"],"onlineCount":1,"resumeToken":"T"}"#
            ),
            (.directMessage(to: "bob", text: "hi"), 0x0010, #"{"text":"hi","to":"bob"}"#),
            (.broadcast(text: "hi all"), 0x0011, #"{"text":"hi all"}"#),
            (.delivery(from: "ann", text: "hi", isDirect: true), 0x0012, #"{"direct":true,"from":"ann","text":"hi"}"#),
            (.presence(name: "bob", online: true), 0x0013, #"{"name":"bob","online":true}"#),
            (.heartbeat, 0x0020, "{}"),
            (.heartbeatAck, 0x0021, "{}"),
            (
                .error(code: .nameTaken, detail: "ann is already logged in"), 0x00F0,
                #"{"code":"nameTaken","detail":"ann is already logged in"}"#
            )
        ]
        for (message, code, json) in v1 {
            let body = Array(json.utf8)
            #expect(message.version == .v1)
            #expect(
                [UInt8](try codec.encode(message))
                    == [0x00, 0x01, UInt8(code >> 8), UInt8(code & 0xFF), 0x00, 0x00, UInt8(body.count)] + body)
            #expect(try decode(try codec.encode(message)) == message)
        }
    }

    /// The same function code decodes into the case of the frame's version.
    @Test func oneCodecDecodesBothVersions() throws {
        #expect(
            try codec.message(from: frame(version: 1, .directMessage, #"{"text":"hi","to":"bob"}"#))
                == .directMessage(to: "bob", text: "hi"))
        #expect(
            try codec.message(from: frame(version: 2, .directMessage, #"{"id":17,"text":"hi","to":"bob"}"#))
                == .v2(.directMessage(id: 17, to: "bob", text: "hi")))
        // Unknown keys are ignored, as in version 1; a missing positions is {}.
        #expect(
            try codec.message(from: frame(.login, #"{"name":"ann","client":"\#(Self.client)","colour":"red"}"#))
                == .v2(.login(name: "ann", password: nil, resumeToken: nil, clientInstance: Self.client, positions: [:])))
        #expect(ChatMessage.v2(.heartbeat).version == .v2)
        #expect(ChatMessage.v2(.stored(id: 1, conversation: "room", sequence: 1)).functionCode == .stored)
    }

    @Test(arguments: [
        // Ids and sequence numbers: 1 to 2^53 - 1.
        (
            FunctionCode.directMessage, #"{"id":9007199254740992,"text":"hi","to":"bob"}"#,
            ChatCodec.ProtocolError.numberOutOfRange(key: "id", value: 9_007_199_254_740_992)
        ),
        (.directMessage, #"{"id":0,"text":"hi","to":"bob"}"#, .numberOutOfRange(key: "id", value: 0)),
        (.broadcast, #"{"id":18446744073709551615,"text":"hi"}"#, .numberOutOfRange(key: "id", value: .max)),
        (
            .stored, #"{"conversation":"room","id":1,"seq":9007199254740992}"#,
            .numberOutOfRange(key: "seq", value: 9_007_199_254_740_992)
        ),
        (
            .delivery, #"{"conversation":"room","direct":false,"from":"a","seq":1,"text":"t","time":9007199254740992}"#,
            .numberOutOfRange(key: "time", value: 9_007_199_254_740_992)
        ),
        (.received, #"{"conversation":"room","seq":0}"#, .numberOutOfRange(key: "seq", value: 0)),
        (
            .error, #"{"code":"badRequest","detail":"d","id":9007199254740993}"#,
            .numberOutOfRange(key: "id", value: 9_007_199_254_740_993)
        ),
        (
            .error, #"{"code":"throttled","detail":"d","retryAfter":9007199254740992}"#,
            .numberOutOfRange(key: "retryAfter", value: 9_007_199_254_740_992)
        ),
        (
            .login, #"{"name":"ann","client":"0123456789abcdef0123456789abcdef","positions":{"room":9007199254740992}}"#,
            .numberOutOfRange(key: "positions", value: 9_007_199_254_740_992)
        ),
        // The client instance: exactly 32 lowercase hex digits.
        (
            .login, #"{"name":"ann","client":"0123456789ABCDEF0123456789ABCDEF"}"#,
            .invalidClientInstance("0123456789ABCDEF0123456789ABCDEF")
        ),
        (
            .login, #"{"name":"ann","client":"0123456789abcdef0123456789abcde"}"#,
            .invalidClientInstance("0123456789abcdef0123456789abcde")
        ),
        (
            .login, #"{"name":"ann","client":"0123456789abcdef0123456789abcdeg"}"#,
            .invalidClientInstance("0123456789abcdef0123456789abcdeg")
        ),
        // Passwords: 1 to 1,024 bytes.
        (
            .login, #"{"name":"ann","password":"","client":"0123456789abcdef0123456789abcdef"}"#,
            .invalidPasswordLength(bytes: 0)
        ),
        (
            .login, #"{"name":"ann","password":"\#(String(repeating: "é", count: 513))","client":"0123456789abcdef0123456789abcdef"}"#,
            .invalidPasswordLength(bytes: 1026)
        ),
        // Conversation ids.
        (
            .login, #"{"name":"ann","client":"0123456789abcdef0123456789abcdef","positions":{"lobby":1}}"#,
            .invalidConversation("lobby")
        ),
        (.historyRequest, #"{"conversation":"direct:ann","limit":20}"#, .invalidConversation("direct:ann")),
        (.historyRequest, #"{"conversation":"direct:ann  bob","limit":20}"#, .invalidConversation("direct:ann  bob")),
        (.historyRequest, #"{"conversation":"direct:ann bob cy","limit":20}"#, .invalidConversation("direct:ann bob cy")),
        (.received, #"{"conversation":"Room","seq":1}"#, .invalidConversation("Room")),
        // History limits: 1 to 100.
        (.historyRequest, #"{"conversation":"room","limit":0}"#, .limitOutOfRange(0)),
        (.historyRequest, #"{"conversation":"room","limit":101}"#, .limitOutOfRange(101)),
        (.historyRequest, #"{"conversation":"room","limit":-1}"#, .limitOutOfRange(-1))
    ])
    func outOfBoundsValuesAreTypedDecodeErrors(_ code: FunctionCode, _ body: String, _ error: ChatCodec.ProtocolError) {
        #expect(throws: error) { try codec.message(from: frame(code, body)) }
    }

    @Test func overlongListsAreRefused() throws {
        let positions = (0..<1_001).map { #""direct:a u\#($0)":1"# }.joined(separator: ",")
        let login = #"{"name":"ann","client":"\#(Self.client)","positions":{\#(positions)}}"#
        #expect(throws: ChatCodec.ProtocolError.tooManyPositions(1_001)) { try codec.message(from: frame(.login, login)) }
        let thousand = (0..<1_000).map { #""direct:a u\#($0)":1"# }.joined(separator: ",")
        guard
            case .v2(.login(_, _, _, _, let accepted, _))? = try? codec.message(
                from: frame(.login, #"{"name":"ann","client":"\#(Self.client)","positions":{\#(thousand)}}"#))
        else {
            Issue.record("1,000 positions refused")
            return
        }
        #expect(accepted.count == 1_000)

        let entries = (1...101).map { #"{"from":"a","seq":\#($0),"text":"t","time":0}"# }.joined(separator: ",")
        #expect(throws: ChatCodec.ProtocolError.tooManyHistoryMessages(101)) {
            try codec.message(from: frame(.history, #"{"conversation":"room","messages":[\#(entries)]}"#))
        }
    }

    @Test func versionsAndCodesOutsideTheProtocolAreRefused() throws {
        #expect(throws: ChatCodec.ProtocolError.unsupportedVersion(3)) { try codec.message(from: frame(version: 3, .heartbeat, "{}")) }
        #expect(throws: ChatCodec.ProtocolError.unsupportedVersion(0)) { try codec.message(from: frame(version: 0, .heartbeat, "{}")) }
        // The version 2 codes do not exist in version 1.
        for code in [FunctionCode.stored, .received, .receipt, .historyRequest, .history, .who, .onlineUsers, .presenceChanges] {
            #expect(code.isVersion2Only)
            #expect(throws: ChatCodec.ProtocolError.unknownFunctionCode(code.rawValue)) {
                try codec.message(from: frame(version: 1, code, #"{"conversation":"room","seq":1}"#))
            }
        }
        #expect(FunctionCode.allCases.filter(\.isVersion2Only).count == 8)
        // The stream's decoder refuses version 3 as soon as the header is in.
        var reader = FrameReader(decoder: codec.makeDecoder())
        reader.append(Data([0x00, 0x03, 0x00, 0x20, 0x00, 0x00, 0x02]))
        #expect(throws: FramingError.unsupportedVersion(3)) { try reader.nextFrame() }
    }

    /// What JSON itself cannot hold in the fields' types is a malformed body.
    @Test(arguments: [
        #"{"id":18446744073709551616,"text":"hi","to":"bob"}"#,  // over UInt64
        #"{"id":-1,"text":"hi","to":"bob"}"#,
        #"{"id":1.5,"text":"hi","to":"bob"}"#,
        #"{"id":"17","text":"hi","to":"bob"}"#,
        #"{"text":"hi","to":"bob"}"#  // a version 1 body in a version 2 frame: no id
    ])
    func bodiesThatAreNotTheJSONOfTheirCodeAreMalformed(_ body: String) {
        #expect {
            try codec.message(from: frame(.directMessage, body))
        } throws: { error in
            guard case ChatCodec.ProtocolError.malformedBody(0x0010, _) = error else { return false }
            return true
        }
    }

    /// Encoding refuses what decoding would, so a server never sends a frame that closes its client's connection.
    @Test func encodingRefusesValuesOutOfBounds() {
        #expect(throws: ChatCodec.ProtocolError.numberOutOfRange(key: "id", value: 1 << 53)) {
            try codec.encode(.v2(.directMessage(id: 1 << 53, to: "bob", text: "hi")))
        }
        #expect(throws: ChatCodec.ProtocolError.numberOutOfRange(key: "seq", value: 0)) {
            try codec.encode(.v2(.stored(id: 1, conversation: "room", sequence: 0)))
        }
        let before1970 = Date(timeIntervalSince1970: -1)
        #expect(throws: ChatCodec.ProtocolError.timeOutOfRange(before1970)) {
            try codec.encode(
                .v2(
                    .delivery(
                        from: "a", text: "t", isDirect: false, conversation: "room", sequence: 1,
                        time: before1970)))
        }
        #expect(throws: ChatCodec.ProtocolError.limitOutOfRange(101)) {
            try codec.encode(.v2(.historyRequest(conversation: "room", limit: 101)))
        }
        #expect(throws: ChatCodec.ProtocolError.invalidConversation("direct:ann")) {
            try codec.encode(.v2(.received(conversation: "direct:ann", upTo: 1)))
        }
        // The largest exact integer goes through.
        #expect(throws: Never.self) { try codec.encode(.v2(.directMessage(id: ChatCodec.maxExactInteger, to: "b", text: "t"))) }
        #expect(ChatCodec.maxExactInteger == 9_007_199_254_740_991)
    }

    /// A version 2 stream (a compressed history among them) decodes the same however TCP cuts it: one
    /// byte at a time, at every cut point, and in random chunks.
    @Test(.cpuBound) func aVersion2StreamDecodesOneByteAtATime() throws {
        let long = String(repeating: "all work and no play ", count: 40)
        let messages: [ChatMessage] =
            Self.bodies.map { .v2($0.0) } + [
                .v2(
                    .history(
                        conversation: "direct:ann bob",
                        messages: (1...30).map {
                            ChatHistoryEntry(sequence: UInt64($0), from: "ann", text: long, time: Self.time)
                        })),
                .heartbeat  // a version 1 frame in the same stream decodes too (the server keeps one version per connection)
            ]
        var bytes: [UInt8] = []
        for message in messages { bytes += try codec.encode(message) }

        var reader = FrameReader(decoder: codec.makeDecoder())
        var decoded: [ChatMessage] = []
        for byte in bytes {
            reader.append(Data([byte]))
            while let frame = try reader.nextFrame() { decoded.append(try codec.message(from: frame)) }
        }
        #expect(decoded == messages)

        var frames: [SevenByteHeaderFrame] = []
        for message in messages {
            var single = FrameReader(decoder: codec.makeDecoder())
            single.append(try codec.encode(message))
            frames.append(try #require(try single.nextFrame()))
        }
        #expect(frames.filter(\.isCompressed).count == 1)
        DecoderVerifier.verify({ codec.makeDecoder() }, bytes: bytes, expecting: frames)
    }

    @Test func heartbeatsTravelInTheCodecsVersionAndAreAnsweredInTheirs() throws {
        let v2 = ChatCodec(version: .v2)
        #expect(v2.heartbeat == .v2(.heartbeat))
        #expect(v2.heartbeatAck == .v2(.heartbeatAck))
        #expect([UInt8](try v2.encode(v2.heartbeat)) == [0x00, 0x02, 0x00, 0x20, 0x00, 0x00, 0x02, 0x7B, 0x7D])
        #expect(codec.heartbeat == .heartbeat)
        #expect([UInt8](try codec.encode(codec.heartbeat)) == [0x00, 0x01, 0x00, 0x20, 0x00, 0x00, 0x02, 0x7B, 0x7D])
        for c in [codec, v2] {
            #expect(c.isHeartbeat(.heartbeat) && c.isHeartbeat(.v2(.heartbeat)))
            #expect(c.isHeartbeatAck(.heartbeatAck) && c.isHeartbeatAck(.v2(.heartbeatAck)))
            #expect(!c.isHeartbeat(.heartbeatAck) && !c.isHeartbeatAck(.v2(.heartbeat)))
            #expect(c.heartbeatAck(answering: .heartbeat) == .heartbeatAck)
            #expect(c.heartbeatAck(answering: .v2(.heartbeat)) == .v2(.heartbeatAck))
        }
    }

    @Test func theReliableLinkCodecMapping() {
        // Numbering: the app's messages of either version become numbered version 2 messages.
        #expect(codec.message(.directMessage(to: "bob", text: "hi"), numbered: 17) == .v2(.directMessage(id: 17, to: "bob", text: "hi")))
        #expect(codec.message(.broadcast(text: "all"), numbered: 18) == .v2(.broadcast(id: 18, text: "all")))
        #expect(
            codec.message(.v2(.directMessage(id: 3, to: "bob", text: "hi")), numbered: 19)
                == .v2(.directMessage(id: 19, to: "bob", text: "hi")))
        #expect(codec.message(.v2(.broadcast(id: 3, text: "all")), numbered: 20) == .v2(.broadcast(id: 20, text: "all")))
        let request = ChatMessage.v2(.historyRequest(conversation: "room", limit: 5))
        #expect(codec.message(request, numbered: 21) == request)
        #expect(codec.message(.heartbeat, numbered: 22) == .heartbeat)

        #expect(codec.id(of: .v2(.directMessage(id: 17, to: "bob", text: "hi"))) == 17)
        #expect(codec.id(of: .v2(.broadcast(id: 18, text: "all"))) == 18)
        #expect(codec.id(of: .directMessage(to: "bob", text: "hi")) == nil)
        #expect(codec.id(of: request) == nil)

        #expect(codec.role(of: .v2(.stored(id: 17, conversation: "direct:ann bob", sequence: 5))) == .stored(id: 17))
        #expect(codec.role(of: .v2(.stored(id: 18, conversation: "room", sequence: nil))) == .stored(id: 18))
        #expect(codec.role(of: .v2(.error(code: .unknownRecipient, detail: "d", id: 17, retryAfter: nil))) == .refused(id: 17))
        #expect(codec.role(of: .v2(.error(code: .badRequest, detail: "d", id: 17, retryAfter: nil))) == .refused(id: 17))
        #expect(codec.role(of: .v2(.error(code: .storeUnavailable, detail: "d", id: 17, retryAfter: nil))) == .other)
        #expect(
            codec.role(of: .v2(.error(code: .storeUnavailable, detail: "d", id: 17, retryAfter: 1))) == .retry(id: 17, after: .seconds(1)))
        #expect(codec.role(of: .v2(.error(code: .notLoggedIn, detail: "d", id: 17, retryAfter: nil))) == .other)
        #expect(codec.role(of: .v2(.error(code: .badRequest, detail: "d", id: nil, retryAfter: nil))) == .other)
        #expect(
            codec.role(
                of: .v2(
                    .delivery(
                        from: "ann", text: "hi", isDirect: true, conversation: "direct:ann bob",
                        sequence: 5, time: Self.time))) == .delivery(conversation: "direct:ann bob", sequence: 5))
        #expect(
            codec.role(
                of: .v2(
                    .delivery(
                        from: "ann", text: "hi", isDirect: false, conversation: "room",
                        sequence: nil, time: Self.time))) == .other)
        #expect(codec.role(of: .v2(.receipt(conversation: "direct:ann bob", upTo: 5, by: "bob"))) == .other)
        #expect(codec.role(of: .delivery(from: "ann", text: "hi", isDirect: true)) == .other)
        #expect(codec.role(of: .error(code: .unknownRecipient, detail: "d")) == .other)

        #expect(codec.acknowledgement(conversation: "direct:ann bob", upTo: 5) == .v2(.received(conversation: "direct:ann bob", upTo: 5)))
    }

    @Test func descriptionsNameTheIdsAndHidePasswords() {
        #expect(ChatMessage.v2(.directMessage(id: 17, to: "bob", text: "hi")).description == #"direct message #17 to bob: "hi""#)
        #expect(
            ChatMessage.v2(
                .login(
                    name: "ann", password: "secret", resumeToken: nil, clientInstance: Self.client,
                    positions: ["room": 1])
            ).description
                == "login ann with password, client \(Self.client), 1 positions")
        #expect(ChatMessage.v2(.stored(id: 18, conversation: "room", sequence: nil)).description == "stored #18 as room (live only)")
        #expect(
            ChatMessage.v2(.error(code: .unknownRecipient, detail: "d", id: 17, retryAfter: nil)).description
                == "error unknownRecipient for #17: d")
    }
}

/// docs/PROTOCOL.md's version 2 examples are what the codec writes.
@Suite struct ProtocolDocV2Tests {
    static let doc: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)) ?? ""
    }()

    /// `bytes` as the doc shows them: two uppercase hex digits each, 16 to a line.
    static func hex(_ bytes: Data) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            bytes[(bytes.startIndex + start)..<min(bytes.endIndex, bytes.startIndex + start + 16)]
                .map { String(format: "%02X", $0) }.joined(separator: " ")
        }.joined(separator: "\n")
    }

    @Test func theExampleBytesAreTheCodecs() throws {
        let codec = ChatCodec()
        #expect(Self.doc.contains("## Version 2"))
        for message: ChatMessageV2 in [
            .directMessage(id: 17, to: "bob", text: "hi"),
            .stored(id: 17, conversation: "direct:ann bob", sequence: 5),
            .delivery(
                from: "ann", text: "hi", isDirect: true, conversation: "direct:ann bob", sequence: 5,
                time: ChatCodecV2Tests.time)
        ] {
            let block = "```\n" + Self.hex(try codec.encode(.v2(message))) + "\n```"
            #expect(Self.doc.contains(block), "docs/PROTOCOL.md lacks the bytes of \(message):\n\(block)")
        }
    }

    /// Every body the doc's version 2 tables show is exactly what the codec writes for that message.
    @Test func theExampleBodiesAreTheCodecs() {
        for (message, json) in ChatCodecV2Tests.bodies where json != "{}" {
            #expect(Self.doc.contains("`\(json)`"), "docs/PROTOCOL.md lacks the body of \(message): \(json)")
        }
    }
}
