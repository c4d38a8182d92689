import AsyncSocket
@testable import ChatProtocol
import Foundation
import LongLink
import SocketFraming
import Testing

/// What the server says when it refuses (issue 12): the text limit and why it is sound, the error
/// frame each refusal becomes, plain words for bad frames, the client's reading of the new codes.
@Suite struct ChatRefusalCodecTests {
    let codec = ChatCodec()

    /// The longest name the login rules allow, in bytes: 32 characters of 4 bytes of UTF-8 each.
    /// A name of the most bytes a valid name may have (``UserName/maxBytes``, 64).
    static let longestName = String(repeating: "小", count: 21) + "a"

    @Test func jsonTextBytesCountsWhatTheEncoderWrites() throws {
        var samples = (0..<0x80).compactMap { Unicode.Scalar($0).map { String(Character($0)) } }
        samples += ["é", "日本", "😀", "\u{2028}", "\u{7F}", "a\"b\\c/d", "\r\n\t"]
        let empty = try Bodies.encode(.broadcast(text: "")).count
        for text in samples {
            let written = try Bodies.encode(.broadcast(text: text)).count - empty
            #expect(ChatCodec.jsonTextBytes(text) == written, "\(text.debugDescription)")
        }
        #expect(ChatCodec.jsonTextBytes("hi") == 2)
        #expect(ChatCodec.jsonTextBytes("\u{1B}[0m") == 9)
    }

    /// The limit is sound: a text of exactly `maxTextBytes`, of the kind that JSON writes longest,
    /// fits in every delivery, between the longest names, with the largest numbers.
    @Test func everyDeliveryOfATextOfTheLimitFitsWithTheLongestNames() throws {
        let limit = ChatCodec.maxTextBytes
        #expect(limit == 65_000)
        let name = Self.longestName
        #expect(name.utf8.count == UserName.maxBytes && UserName.isWellFormed(name))  // and valid: UserNameTests.goodNames
        let texts = [
            String(repeating: "x", count: limit),
            String(repeating: "\"", count: limit / 2),
            String(repeating: "\u{1}", count: limit / 6) + String(repeating: "x", count: limit % 6),
            String(repeating: "😀", count: limit / 4)
        ]
        let latest = Date(timeIntervalSince1970: Double(ChatCodec.maxExactInteger / 1000))
        for text in texts {
            #expect(ChatCodec.jsonTextBytes(text) == limit)
            let conversation = "direct:\(name) \(name)"
            let deliveries: [ChatMessage] = [
                .v2(
                    .delivery(
                        from: name, text: text, isDirect: true, conversation: conversation, sequence: ChatCodec.maxExactInteger,
                        time: latest)),
                .v2(.delivery(from: name, text: text, isDirect: false, conversation: "room", sequence: nil, time: latest)),
                .delivery(from: name, text: text, isDirect: true),
                .v2(
                    .history(
                        conversation: conversation,
                        messages: [
                            ChatHistoryEntry(sequence: ChatCodec.maxExactInteger, from: name, text: text, time: latest)
                        ]))
            ]
            for delivery in deliveries {
                let body = try Bodies.encode(delivery)
                #expect(body.count <= 65_536 && body.count >= limit)
                _ = try codec.encode(delivery)
            }
        }
    }

    @Test func eachRefusalBecomesAnErrorFrameInTheClientsVersion() {
        let cases: [(LinkRefusal, ChatErrorCode, String)] = [
            (.serverFull(maxConnections: 960), .serverFull, "the server is full (960 connections); try again later"),
            (.protocolError("not a chat frame"), .protocolError, "not a chat frame"),
            (.admissionTimeout(.seconds(10)), .loginTimeout, "no login within 10 s of connecting"),
            (.frameTimeout(.milliseconds(2500)), .frameTimeout, "a frame was not finished within 2.5 s of its first byte"),
            (.shuttingDown, .serverShuttingDown, "the server is shutting down; reconnect")
        ]
        for (refusal, code, detail) in cases {
            #expect(codec.farewell(refusal, version: nil) == .error(code: code, detail: detail))
            #expect(codec.farewell(refusal, version: 1) == .error(code: code, detail: detail))
            #expect(codec.farewell(refusal, version: 2) == .v2(.error(code: code, detail: detail, id: nil, retryAfter: nil)))
        }
        #expect(codec.version(of: .heartbeat) == 1)
        #expect(codec.version(of: .v2(.heartbeat)) == 2)
    }

    @Test func badFramesInPlainWords() {
        #expect(codec.describe(FramingError.unsupportedVersion(0x4745)) == #"not a chat frame: version 0x4745 ("GE") is not 1 or 2"#)
        #expect(codec.describe(FramingError.unsupportedVersion(3)) == "not a chat frame: version 0x0003 (not text) is not 1 or 2")
        #expect(codec.describe(FramingError.unknownFunctionCode(0x0019)) == "function code 0x0019 (who) is not a version 1 message")
        #expect(codec.describe(FramingError.unknownFunctionCode(0xBEEF)) == "function code 0xBEEF is not a chat message")
        #expect(
            codec.describe(FramingError.malformedHeader("compressed flag is 47, expected 0 or 1"))
                == "not a chat frame: compressed flag is 47, expected 0 or 1")
        #expect(
            codec.describe(FramingError.decompressedTooLarge(maxBytes: 65_536))
                == "the compressed body decompresses to more than 65536 bytes")
        #expect(
            codec.describe(FramingError.frameTooLong(length: 70_000, maxFrameLength: 65_535))
                == "a body of 70000 bytes is over the limit of 65535 bytes")
        #expect(codec.describe(ChatCodec.ProtocolError.limitOutOfRange(0)) == "limit out of range (1-100): 0")
    }

    @Test func bodiesThatDoNotFitTheirMessageAreSaidInPlainWords() {
        func reason(_ json: String, code: FunctionCode = .directMessage, version: UInt16 = 2) -> String? {
            do {
                _ = try codec.message(from: SevenByteHeaderFrame(version: version, functionCode: code.rawValue, body: Data(json.utf8)))
                return nil
            } catch ChatCodec.ProtocolError.malformedBody(_, let reason) {
                return reason
            } catch {
                return "\(error)"
            }
        }
        #expect(reason(#"{"id":1,"text":"hi"}"#) == #"missing key "to""#)
        #expect(reason(#"{"id":"one","text":"hi","to":"bob"}"#) == #""id" is not a number"#)
        #expect(reason(#"{"id":1,"text":null,"to":"bob"}"#) == #""text" is null, not a string"#)
        #expect(reason("GET / HTTP/1.1") == "not JSON")
        #expect(reason(#"{"text":7}"#, code: .broadcast, version: 1) == #""text" is not a string"#)
        #expect(reason(#"{"code":"noSuchCode","detail":"?"}"#, code: .error, version: 1) == #""code" has a value that is not allowed"#)
    }

    @Test func theClientReadsTheNewCodes() {
        #expect(codec.role(of: .v2(.error(code: .rateLimited, detail: "slow", id: 7, retryAfter: 3))) == .retry(id: 7, after: .seconds(3)))
        #expect(
            codec.role(of: .v2(.error(code: .rateLimited, detail: "slow", id: 7, retryAfter: nil))) == .retry(id: 7, after: .seconds(1)))
        #expect(codec.role(of: .v2(.error(code: .rateLimited, detail: "slow", id: nil, retryAfter: 3))) == .other)
        #expect(codec.role(of: .v2(.error(code: .messageTooLong, detail: "long", id: 8, retryAfter: nil))) == .refused(id: 8))
        #expect(codec.role(of: .v2(.error(code: .serverShuttingDown, detail: "bye", id: nil, retryAfter: nil))) == .other)
        #expect(codec.isGoingAway(.error(code: .serverShuttingDown, detail: "bye")))
        #expect(codec.isGoingAway(.v2(.error(code: .serverShuttingDown, detail: "bye", id: nil, retryAfter: nil))))
        #expect(!codec.isGoingAway(.error(code: .serverFull, detail: "full")))
        let forGood: [ChatErrorCode] = [.unknownRecipient, .badRequest, .messageTooLong]
        let notForGood: [ChatErrorCode] = [
            .rateLimited, .serverFull, .loginTimeout, .frameTimeout, .protocolError, .serverShuttingDown,
            .storeUnavailable, .throttled, .notLoggedIn
        ]
        #expect(forGood.map(\.refusesForGood) == [true, true, true])
        #expect(notForGood.filter(\.refusesForGood) == [])
    }

    @Test func theNewCodesTravelInBothVersions() throws {
        for code: ChatErrorCode in [
            .serverFull, .rateLimited, .loginTimeout, .frameTimeout, .protocolError, .messageTooLong, .serverShuttingDown
        ] {
            for message: ChatMessage in [.error(code: code, detail: "d"), .v2(.error(code: code, detail: "d", id: 5, retryAfter: 2))] {
                var decoder = codec.makeDecoder()
                var buffer = FrameBuffer()
                buffer.append(try codec.encode(message))
                let frame = try #require(try decoder.decode(&buffer))
                #expect(try codec.message(from: frame) == message)
            }
        }
        #expect(
            String(decoding: try Bodies.encode(.v2(.error(code: .rateLimited, detail: "d", id: 5, retryAfter: 2))), as: UTF8.self)
                == #"{"code":"rateLimited","detail":"d","id":5,"retryAfter":2}"#)
    }
}
