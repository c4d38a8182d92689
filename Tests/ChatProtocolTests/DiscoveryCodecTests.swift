import AsyncSocket
@testable import ChatProtocol
import Foundation
import Testing
import TestSupport

/// The discovery datagrams byte by byte (docs/PROTOCOL.md, "Finding the server") and what is refused.
@Suite struct DiscoveryCodecTests {
    static func bytes(_ hex: String) -> Data {
        Data(hex.split(separator: " ").compactMap { UInt8($0, radix: 16) })
    }

    static let query = bytes("49 4D 43 44 01 01 01 02 03 04 05 06 07 08 04 63 68 61 74")
    static let answer = bytes("49 4D 43 44 01 02 01 02 03 04 05 06 07 08 1E 61 00 00 00 03 09 31 32 37 2E 30 2E 30 2E 31 04 63 68 61 74")

    @Test func queryEncodesAsDocumented() throws {
        let query = DiscoveryQuery(nonce: 0x0102_0304_0506_0708, serverName: "chat")
        #expect(query.encoded == Self.query)
        #expect(try DiscoveryQuery(decoding: Self.query) == query)
        let any = DiscoveryQuery(nonce: .max)
        #expect(any.encoded == Self.bytes("49 4D 43 44 01 01 FF FF FF FF FF FF FF FF 00"))
        #expect(try DiscoveryQuery(decoding: any.encoded) == any)
    }

    @Test func answerEncodesAsDocumented() throws {
        let answer = DiscoveryAnswer(nonce: 0x0102_0304_0506_0708, port: 7777, onlineUsers: 3, host: "127.0.0.1", serverName: "chat")
        #expect(answer.encoded == Self.answer)
        #expect(try DiscoveryAnswer(decoding: Self.answer) == answer)
        // No host: "connect to where this answer came from"; names in any script.
        let wildcard = DiscoveryAnswer(nonce: 1, port: 1, onlineUsers: .max, host: "", serverName: "聊天室")
        #expect(wildcard.encoded.count == 22 + 9)
        #expect(try DiscoveryAnswer(decoding: wildcard.encoded) == wildcard)
        // The longest fields fit.
        let longest = DiscoveryAnswer(
            nonce: 2, port: 65535, onlineUsers: 0, host: String(repeating: "h", count: 255),
            serverName: String(repeating: "n", count: 64))
        #expect(longest.encoded.count == 341)
        #expect(try DiscoveryAnswer(decoding: longest.encoded) == longest)
    }

    @Test func headErrorsAreExact() {
        #expect(throws: DiscoveryDecodingError.badMagic) { try DiscoveryQuery(decoding: Data()) }
        #expect(throws: DiscoveryDecodingError.badMagic) { try DiscoveryQuery(decoding: Self.bytes("49 4D 43")) }
        #expect(throws: DiscoveryDecodingError.badMagic) { try DiscoveryQuery(decoding: Data("M-SEARCH * HTTP/1.1\r\n".utf8)) }
        #expect(throws: DiscoveryDecodingError.truncated(size: 4, needed: 6)) { try DiscoveryQuery(decoding: Self.bytes("49 4D 43 44")) }
        #expect(throws: DiscoveryDecodingError.unsupportedVersion(2)) {
            try DiscoveryQuery(decoding: Self.bytes("49 4D 43 44 02 01 01 02 03 04 05 06 07 08 00"))
        }
        #expect(throws: DiscoveryDecodingError.unsupportedVersion(0)) { try DiscoveryAnswer(decoding: Self.bytes("49 4D 43 44 00 02")) }
        // A query is not an answer, nor an answer a query; unknown kinds are neither.
        #expect(throws: DiscoveryDecodingError.unexpectedKind(1)) { try DiscoveryAnswer(decoding: Self.query) }
        #expect(throws: DiscoveryDecodingError.unexpectedKind(2)) { try DiscoveryQuery(decoding: Self.answer) }
        #expect(throws: DiscoveryDecodingError.unexpectedKind(3)) {
            try DiscoveryQuery(decoding: Self.bytes("49 4D 43 44 01 03 01 02 03 04 05 06 07 08 00"))
        }
    }

    @Test func sizeAndFieldErrorsAreExact() {
        #expect(throws: DiscoveryDecodingError.truncated(size: 10, needed: 14)) {
            try DiscoveryQuery(decoding: Self.query.prefix(10))
        }
        #expect(throws: DiscoveryDecodingError.truncated(size: 18, needed: 19)) {
            try DiscoveryQuery(decoding: Self.query.prefix(18))
        }
        #expect(throws: DiscoveryDecodingError.trailingBytes(count: 1)) { try DiscoveryQuery(decoding: Self.query + [0]) }
        #expect(throws: DiscoveryDecodingError.trailingBytes(count: 3)) { try DiscoveryAnswer(decoding: Self.answer + [1, 2, 3]) }
        // A name length over 64 is refused before its bytes are looked at.
        #expect(throws: DiscoveryDecodingError.fieldTooLong(field: "name", bytes: 65, max: 64)) {
            try DiscoveryQuery(decoding: Self.bytes("49 4D 43 44 01 01 01 02 03 04 05 06 07 08 41") + Data(repeating: 0x61, count: 65))
        }
        #expect(throws: DiscoveryDecodingError.invalidUTF8(field: "name")) {
            try DiscoveryQuery(decoding: Self.bytes("49 4D 43 44 01 01 01 02 03 04 05 06 07 08 02 C3 28"))
        }
        #expect(throws: DiscoveryDecodingError.invalidUTF8(field: "host")) {
            try DiscoveryAnswer(decoding: Self.bytes("49 4D 43 44 01 02 01 02 03 04 05 06 07 08 1E 61 00 00 00 03 01 FF 04 63 68 61 74"))
        }
        #expect(throws: DiscoveryDecodingError.invalidAnswer("port 0")) {
            try DiscoveryAnswer(decoding: Self.bytes("49 4D 43 44 01 02 01 02 03 04 05 06 07 08 00 00 00 00 00 03 00 04 63 68 61 74"))
        }
        #expect(throws: DiscoveryDecodingError.invalidAnswer("empty server name")) {
            try DiscoveryAnswer(decoding: Self.bytes("49 4D 43 44 01 02 01 02 03 04 05 06 07 08 1E 61 00 00 00 03 00 00"))
        }
    }

    /// Every cut of a valid datagram is refused: a lost tail never decodes as something else.
    @Test func everyPrefixOfAValidDatagramIsRefused() {
        for count in 0..<Self.answer.count {
            #expect(throws: DiscoveryDecodingError.self) { try DiscoveryAnswer(decoding: Self.answer.prefix(count)) }
        }
        for count in 0..<Self.query.count {
            #expect(throws: DiscoveryDecodingError.self) { try DiscoveryQuery(decoding: Self.query.prefix(count)) }
        }
    }

    /// Random bytes never crash the decoders (and almost never decode).
    @Test(.cpuBound) func randomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var data = Data(DiscoveryProtocol.magic + [1, UInt8.random(in: 1...2, using: &generator)])
            data += (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? DiscoveryQuery(decoding: data)
            _ = try? DiscoveryAnswer(decoding: data)
        }
    }
}
