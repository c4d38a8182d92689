@testable import ChatProtocol
import Foundation
import SocketFraming
import Testing
import TestSupport

@Suite struct ChatCodecTests {
    let codec = ChatCodec()

    func roundTrip(_ message: ChatMessage) throws -> ChatMessage? {
        var reader = FrameReader(decoder: codec.makeDecoder())
        reader.append(try codec.encode(message))
        guard let frame = try reader.nextFrame() else { return nil }
        return try codec.message(from: frame)
    }

    @Test(arguments: [
        ChatMessage.login(name: "ann", resumeToken: nil),
        .login(name: "ann", resumeToken: "T"),
        .loginAccepted(name: "ann", online: ["bob", "cy"], onlineCount: 3, resumeToken: "T"),
        .directMessage(to: "bob", text: "hi ☺"),
        .broadcast(text: "hello all"),
        .delivery(from: "ann", text: "hi", isDirect: true),
        .presence(name: "bob", online: false),
        .heartbeat, .heartbeatAck,
        .error(code: .unknownRecipient, detail: "no user named zed has ever logged in")
    ])
    func everyMessageSurvivesARoundTrip(_ message: ChatMessage) throws {
        #expect(try roundTrip(message) == message)
    }

    @Test func wireBytesAreTheSevenByteHeaderAndJSON() throws {
        let bytes = [UInt8](try codec.encode(.directMessage(to: "bob", text: "hi")))
        let body = Array(#"{"text":"hi","to":"bob"}"#.utf8)
        #expect(bytes == [0x00, 0x01, 0x00, 0x10, 0x00, 0x00, UInt8(body.count)] + body)
        #expect([UInt8](try codec.encode(.heartbeat)) == [0x00, 0x01, 0x00, 0x20, 0x00, 0x00, 0x02, 0x7B, 0x7D])
    }

    @Test func longBodiesTravelCompressed() throws {
        let text = String(repeating: "all work and no play ", count: 100)
        let bytes = try codec.encode(.broadcast(text: text))
        #expect(bytes[4] == 1)  // compressed flag
        #expect(bytes.count < 200)
        #expect(try roundTrip(.broadcast(text: text)) == .broadcast(text: text))
    }

    @Test func framesThatAreNotChatMessagesAreProtocolErrors() throws {
        let unknown = SevenByteHeaderFrame(version: 1, functionCode: 0x7777, body: Data("{}".utf8))
        #expect(throws: ChatCodec.ProtocolError.unknownFunctionCode(0x7777)) { try codec.message(from: unknown) }
        let future = SevenByteHeaderFrame(version: 3, functionCode: 0x0011, body: Data("{}".utf8))
        #expect(throws: ChatCodec.ProtocolError.unsupportedVersion(3)) { try codec.message(from: future) }
        let broken = SevenByteHeaderFrame(version: 1, functionCode: 0x0011, body: Data("{\"txt\":1}".utf8))
        #expect {
            try codec.message(from: broken)
        } throws: { error in
            guard case ChatCodec.ProtocolError.malformedBody(0x0011, _) = error else { return false }
            return true
        }
    }

    /// Log lines and error details say what is wrong with a body in plain words, never Swift's
    /// `DecodingError` dump.
    @Test func malformedBodiesAreDescribedInPlainWords() {
        func reason(_ version: UInt16, _ code: UInt16, _ json: String) -> String {
            do {
                _ = try codec.message(from: SevenByteHeaderFrame(version: version, functionCode: code, body: Data(json.utf8)))
                return "decoded"
            } catch {
                return "\(error)"
            }
        }
        #expect(reason(1, 0x0011, #"{"txt":1}"#) == #"malformed body of a broadcast message (function code 0x0011): missing key "text""#)
        #expect(
            reason(1, 0x0010, #"{"to":1,"text":"x"}"#)
                == #"malformed body of a directMessage message (function code 0x0010): "to" is not a string"#)
        #expect(reason(1, 0x0001, "GET / HTTP/1.1") == "malformed body of a login message (function code 0x0001): not JSON")
        #expect(reason(1, 0x0001, "[]") == "malformed body of a login message (function code 0x0001): the body is not an object")
        #expect(
            reason(2, 0x0001, #"{"name":"ann","client":"00000000000000000000000000000000","positions":{"room":"x"}}"#)
                == #"malformed body of a login message (function code 0x0001): "positions.room" is not a number"#)
        #expect(
            reason(1, 0x0010, #"{"to":null,"text":"x"}"#)
                == #"malformed body of a directMessage message (function code 0x0010): "to" is null, not a string"#)
    }

    @Test func theDecoderAcceptsVersions1And2EachWithItsFunctionCodesAtTheHeader() throws {
        let decoder = codec.makeDecoder()
        #expect(decoder.acceptedVersions == ChatCodec.versions)
        #expect(decoder.acceptedVersions == [1, 2])
        #expect(decoder.maxWireBodyLength == 65_535)
        for version: UInt16 in [1, 2] {
            for code in FunctionCode.allCases {
                var reader = FrameReader(decoder: codec.makeDecoder())
                let frame = SevenByteHeaderFrame(version: version, functionCode: code.rawValue, body: Data("{}".utf8))
                reader.append(try SevenByteHeaderFrameEncoder().encode(frame))
                if version == 1 && code.isVersion2Only {
                    // Refused at the header: the 0x0014–0x001B codes do not exist in version 1.
                    #expect(throws: FramingError.unknownFunctionCode(code.rawValue)) { try reader.nextFrame() }
                } else {
                    #expect(try reader.nextFrame() == frame)
                }
            }
        }
    }

    /// Issue 9: a stream that has lost its place fails once 7 header bytes are in, not after a body
    /// length read from the wrong bytes.
    @Test func aDesynchronisedStreamFailsAsSoonAsTheHeaderIsIn() throws {
        let heartbeat = try codec.encode(.heartbeat)  // 00 01 00 20 00 00 02 7B 7D
        var reader = FrameReader(decoder: codec.makeDecoder())
        reader.append(Data([0x11, 0x12]) + heartbeat.prefix(4))
        #expect(try reader.nextFrame() == nil)
        reader.append(heartbeat.dropFirst(4).prefix(1))
        #expect(throws: FramingError.unsupportedVersion(0x1112)) { try reader.nextFrame() }

        var unknown = FrameReader(decoder: codec.makeDecoder())
        unknown.append(Data([0x00, 0x01, 0x77, 0x77, 0x00, 0xFF, 0xFF]))  // a 65_535-byte body yet to come
        #expect(throws: FramingError.unknownFunctionCode(0x7777)) { try unknown.nextFrame() }
    }

    @Test(.cpuBound) func messagesDecodeHoweverTheStreamIsCut() throws {
        let messages: [ChatMessage] = [
            .login(name: "ann", resumeToken: nil), .heartbeat,
            .broadcast(text: String(repeating: "x", count: 2000)), .directMessage(to: "b", text: "c")
        ]
        var bytes: [UInt8] = []
        var frames: [SevenByteHeaderFrame] = []
        for message in messages {
            let encoded = try codec.encode(message)
            bytes += encoded
            var reader = FrameReader(decoder: codec.makeDecoder())
            reader.append(encoded)
            frames.append(try #require(try reader.nextFrame()))
        }
        DecoderVerifier.verify({ codec.makeDecoder() }, bytes: bytes, expecting: frames)
        #expect(try frames.map { try codec.message(from: $0) } == messages)
    }
}
